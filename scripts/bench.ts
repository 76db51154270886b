/**
 * Side-by-side benchmark of exec-server against raw floors measured in the
 * same run. Usage:
 *
 *   deno task bench [--json] [--out FILE] [--quick] [--server-cmd "CMD ARGS"]
 *
 * The table goes to stderr; `--json` prints the results as JSON on stdout,
 * `--out FILE` writes them to a file.
 *
 * `--server-cmd` measures any implementation of the protocol the same way
 * (default: this repo's cli.ts under the running Deno). Every figure is
 * printed with its floor and the ratio between them.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open, readFile, rename } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { ReadStream } from "node:tty";
import { parseArgs } from "node:util";

const ROOT = new URL("../", import.meta.url).pathname;
const args = parseArgs({
  args: process.argv.slice(2),
  options: {
    json: { type: "boolean" },
    out: { type: "string" },
    quick: { type: "boolean" },
    "server-cmd": { type: "string" },
  },
});
const QUICK = args.values.quick ?? false;
const SERVER_CMD = args.values["server-cmd"]?.split(" ").filter(Boolean) ??
  // Exited processes are retained 30 s by default; the bench starts
  // hundreds per second, so it asks for a short retention instead.
  [process.execPath, "run", "-A", join(ROOT, "cli.ts"), "--exited-retention-ms", "200"];
const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin" };
const STREAM_BYTES = QUICK ? 64 * 1024 * 1024 : 256 * 1024 * 1024;
const FILE_BYTES = 64 * 1024 * 1024;
const MiB = 1024 * 1024;

// deno-lint-ignore no-explicit-any
type Msg = Record<string, any>;

/** A lean JSON-RPC client, so the figures measure the server. */
class Conn {
  child: ReturnType<typeof spawn>;
  #parts: string[] = [];
  #nextId = 1;
  #pending = new Map<number, (m: Msg) => void>();
  /** Per-process notification handlers, by processId. */
  handlers = new Map<string, (m: Msg) => void>();

  constructor(cmd: string[]) {
    this.child = spawn(cmd[0], cmd.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (d: string) => {
      // Search only the new text for newlines: a 90 MB line must not be
      // rescanned for every chunk that extends it.
      let nl = d.indexOf("\n");
      if (nl < 0) {
        this.#parts.push(d);
        return;
      }
      let start = 0;
      while (nl >= 0) {
        this.#parts.push(d.slice(start, nl));
        const line = this.#parts.length === 1 ? this.#parts[0] : this.#parts.join("");
        this.#parts = [];
        if (line) this.#dispatch(JSON.parse(line));
        start = nl + 1;
        nl = d.indexOf("\n", start);
      }
      if (start < d.length) this.#parts.push(d.slice(start));
    });
  }

  #dispatch(m: Msg): void {
    if ("id" in m && !("method" in m)) {
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      p?.(m);
    } else {
      const id = m.params?.processId;
      if (id !== undefined) this.handlers.get(id)?.(m);
    }
  }

  call(method: string, params?: unknown): Promise<Msg> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(
        id,
        (m) => m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result),
      );
      this.child.stdin!.write(JSON.stringify({ id, method, params }) + "\n");
    });
  }

  notify(method: string, params?: unknown): void {
    this.child.stdin!.write(JSON.stringify({ method, params }) + "\n");
  }

  async init(): Promise<Msg> {
    const r = this.call("initialize", { clientName: "bench" });
    this.notify("initialized", {});
    return await r;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.child.on("exit", () => resolve());
      this.child.stdin!.end();
    });
  }
}

function b64Len(s: string): number {
  const pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
  return (s.length / 4) * 3 - pad;
}

function stats(samples: number[]): { median: number; p95: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
  return { median: at(0.5), p95: at(0.95), n: s.length };
}

function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

let seq = 0;
async function runProcess(
  c: Conn,
  argv: string[],
  tty: boolean,
): Promise<{ bytes: number; ms: number }> {
  const id = `b${++seq}`;
  let bytes = 0;
  const t0 = performance.now();
  const done = new Promise<void>((resolve) => {
    c.handlers.set(id, (m) => {
      if (m.method === "process/output") bytes += b64Len(m.params.chunk);
      else if (m.method === "process/exited") {
        c.handlers.delete(id);
        resolve();
      }
    });
  });
  await c.call("process/start", { processId: id, argv, cwd: "/", env: ENV, tty });
  await done;
  return { bytes, ms: performance.now() - t0 };
}

function directSpawn(argv: string[], detached = false): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const ch = spawn(argv[0], argv.slice(1), { stdio: "ignore", env: ENV, detached });
    ch.on("exit", () => resolve(performance.now() - t0));
  });
}

function rawPipeRead(bytes: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const ch = spawn("head", ["-c", String(bytes), "/dev/zero"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    let n = 0;
    ch.stdout!.on("data", (d: Uint8Array) => n += d.length);
    ch.stdout!.on("end", () => resolve((n / MiB) / ((performance.now() - t0) / 1000)));
  });
}

// deno-lint-ignore no-explicit-any
function loadPty(): any {
  const require = createRequire(import.meta.url);
  return require(join(ROOT, "node_modules/node-pty/build/Release/pty.node"));
}

function rawPtyRead(bytes: number): Promise<number> {
  const pty = loadPty();
  const t0 = performance.now();
  return new Promise((resolve) => {
    let n = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve((n / MiB) / ((performance.now() - t0) / 1000));
    };
    const f = pty.fork(
      "head",
      ["-c", String(bytes), "/dev/zero"],
      ["PATH=/usr/bin:/bin"],
      "/",
      80,
      24,
      -1,
      -1,
      false,
      "",
      () => setTimeout(finish, 50),
    );
    const s = new ReadStream(f.fd);
    s.on("data", (d: Uint8Array) => n += d.length);
    s.on("error", finish);
  });
}

async function rawPtyEcho(rounds: number): Promise<number[]> {
  const pty = loadPty();
  const f = pty.fork("cat", [], ["PATH=/usr/bin:/bin"], "/", 80, 24, -1, -1, false, "", () => {});
  const s = new ReadStream(f.fd);
  let waiter: (() => void) | undefined;
  s.on("data", () => waiter?.());
  s.on("error", () => {});
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      waiter = r;
      s.write("x");
    });
    out.push(performance.now() - t0);
  }
  process.kill(f.pid, "SIGKILL");
  s.destroy();
  return out;
}

interface Row {
  name: string;
  unit: string;
  value: number;
  p95?: number;
  floor?: number;
  floorName?: string;
  ratio?: number;
  target?: string;
}

const rows: Row[] = [];
function report(row: Row): void {
  if (row.floor !== undefined) {
    const higherIsBetter = row.unit.includes("/s");
    row.ratio = higherIsBetter ? row.value / row.floor : row.value / row.floor;
  }
  rows.push(row);
  const fmt = (v: number | undefined) =>
    v === undefined ? "" : v >= 100 ? v.toFixed(0) : v.toFixed(2);
  console.error(
    `${row.name.padEnd(34)} ${fmt(row.value).padStart(9)} ${row.unit.padEnd(6)}` +
      (row.p95 !== undefined ? ` p95 ${fmt(row.p95).padStart(8)}` : "".padEnd(13)) +
      (row.floor !== undefined
        ? `  floor ${fmt(row.floor).padStart(8)} (${row.floorName})  ratio ${row.ratio!.toFixed(2)}`
        : "") +
      (row.target ? `  target ${row.target}` : ""),
  );
}

async function main(): Promise<void> {
  const started = performance.now();
  console.error(`server: ${SERVER_CMD.join(" ")}${QUICK ? " (quick)" : ""}`);

  // Cold start: spawn to initialize response; floor: the runtime running an empty script.
  const emptyDir = mkdtempSync(join(tmpdir(), "bench-"));
  const empty = join(emptyDir, "empty.ts");
  writeFileSync(empty, "");
  const cold: number[] = [];
  const coldFloor: number[] = [];
  for (let i = 0; i < (QUICK ? 3 : 8); i++) {
    const t0 = performance.now();
    const c = new Conn(SERVER_CMD);
    await c.init();
    cold.push(performance.now() - t0);
    await c.close();
    const t1 = performance.now();
    spawnSync(process.execPath, ["run", "-A", empty]);
    coldFloor.push(performance.now() - t1);
  }
  const coldS = stats(cold.slice(1));
  report({
    name: "cold start to initialize",
    unit: "ms",
    value: coldS.median,
    p95: coldS.p95,
    floor: stats(coldFloor.slice(1)).median,
    floorName: "runtime, empty script",
    target: "<= 80 ms",
  });

  const c = new Conn(SERVER_CMD);
  await c.init();
  const pid = c.child.pid!;
  await new Promise((r) => setTimeout(r, 300));
  report({ name: "server RSS idle", unit: "MiB", value: rssMiB(pid), target: "<= 60 MiB" });

  // Spawn latency, sequential.
  const spawnN = QUICK ? 30 : 100;
  for (let i = 0; i < 10; i++) await runProcess(c, ["true"], false);
  const sp: number[] = [];
  const spFloor: number[] = [];
  const spSessionFloor: number[] = [];
  for (let i = 0; i < spawnN; i++) {
    sp.push((await runProcess(c, ["true"], false)).ms);
    spFloor.push(await directSpawn(["true"]));
    spSessionFloor.push(await directSpawn(["true"], true));
  }
  const spS = stats(sp);
  const floorS = stats(spFloor);
  report({
    name: "spawn true (pipe), sequential",
    unit: "ms",
    value: spS.median,
    p95: spS.p95,
    floor: floorS.median,
    floorName: "direct spawn",
    target: "p50 <= 2.5 ms and <= 2.5x floor",
  });
  // Context: the server starts every child in a session of its own, which
  // the runtime cannot do with its fast spawn path.
  const sessionS = stats(spSessionFloor);
  report({
    name: "  floor: direct spawn, own session",
    unit: "ms",
    value: sessionS.median,
    p95: sessionS.p95,
  });
  const ptySp: number[] = [];
  for (let i = 0; i < Math.min(spawnN, 50); i++) {
    ptySp.push((await runProcess(c, ["true"], true)).ms);
  }
  const ptySpS = stats(ptySp);
  report({
    name: "spawn true (pty), sequential",
    unit: "ms",
    value: ptySpS.median,
    p95: ptySpS.p95,
    floor: floorS.median,
    floorName: "direct spawn",
  });

  // 100 concurrent spawns. Let the exited processes above expire first, so
  // that a server with a 256-process limit has room for 100 at once.
  await new Promise((r) => setTimeout(r, 400));
  const conc: number[] = [];
  const concFloor: number[] = [];
  for (let r = 0; r < (QUICK ? 2 : 5); r++) {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 100 }, () => runProcess(c, ["true"], false)));
    conc.push(performance.now() - t0);
    const t1 = performance.now();
    await Promise.all(Array.from({ length: 100 }, () => directSpawn(["true"])));
    concFloor.push(performance.now() - t1);
    await new Promise((r) => setTimeout(r, 400));
  }
  const concS = stats(conc);
  report({
    name: "100 concurrent spawns, all exited",
    unit: "ms",
    value: concS.median,
    p95: concS.p95,
    floor: stats(concFloor).median,
    floorName: "direct spawn x100",
    target: "<= 1000 ms",
  });

  // Throughput.
  let peakRss = rssMiB(pid);
  const rssTimer = setInterval(() => peakRss = Math.max(peakRss, rssMiB(pid)), 50);
  for (const tty of [false, true]) {
    const samples: number[] = [];
    const floors: number[] = [];
    for (let i = 0; i < (QUICK ? 2 : 3); i++) {
      const r = await runProcess(c, ["head", "-c", String(STREAM_BYTES), "/dev/zero"], tty);
      if (r.bytes !== STREAM_BYTES) throw new Error(`lost output: ${r.bytes} of ${STREAM_BYTES}`);
      samples.push((r.bytes / MiB) / (r.ms / 1000));
      floors.push(tty ? await rawPtyRead(STREAM_BYTES) : await rawPipeRead(STREAM_BYTES));
    }
    const s = stats(samples);
    report({
      name: `${tty ? "pty" : "pipe"} throughput (${STREAM_BYTES / MiB} MiB)`,
      unit: "MiB/s",
      value: s.median,
      p95: undefined,
      floor: stats(floors).median,
      floorName: tty ? "raw pty read" : "raw pipe read",
      target: tty ? ">= 200 MiB/s" : ">= 400 MiB/s",
    });
  }
  clearInterval(rssTimer);
  report({ name: "server RSS peak under throughput", unit: "MiB", value: peakRss });
  // The kernel's own PTY ceiling, read by a C program (util-linux script).
  if (existsSync("/usr/bin/script")) {
    const t0 = performance.now();
    spawnSync("/usr/bin/script", ["-q", "-c", `head -c ${STREAM_BYTES} /dev/zero`, "/dev/null"], {
      stdio: ["ignore", "ignore", "ignore"],
    });
    report({
      name: "  floor: pty read by script(1), C",
      unit: "MiB/s",
      value: (STREAM_BYTES / MiB) / ((performance.now() - t0) / 1000),
    });
  }

  // PTY keystroke echo.
  const echoId = "echo";
  let echoWaiter: (() => void) | undefined;
  c.handlers.set(echoId, (m) => {
    if (m.method === "process/output") echoWaiter?.();
  });
  await c.call("process/start", {
    processId: echoId,
    argv: ["cat"],
    cwd: "/",
    env: ENV,
    tty: true,
  });
  const echo: number[] = [];
  const rounds = QUICK ? 50 : 200;
  for (let i = 0; i < rounds + 10; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      echoWaiter = r;
      void c.call("process/write", { processId: echoId, chunk: "eA==" });
    });
    if (i >= 10) echo.push(performance.now() - t0);
  }
  await c.call("process/terminate", { processId: echoId });
  c.handlers.delete(echoId);
  const echoS = stats(echo);
  report({
    name: "pty keystroke echo round trip",
    unit: "ms",
    value: echoS.median,
    p95: echoS.p95,
    floor: stats(await rawPtyEcho(rounds)).median,
    floorName: "raw pty echo",
    target: "p50 <= 1 ms",
  });

  // Filesystem.
  const dir = mkdtempSync(join(tmpdir(), "bench-fs-"));
  const file = join(dir, "data.bin");
  const payload = new Uint8Array(FILE_BYTES);
  for (let i = 0; i < payload.length; i += 4096) payload[i] = i & 0xff;
  const { Buffer } = await import("node:buffer");
  const b64 = Buffer.from(payload).toString("base64");
  const fsRounds = QUICK ? 2 : 4;
  const wr: number[] = [];
  const rd: number[] = [];
  const rdFloor: number[] = [];
  const wrFloor: number[] = [];
  let fsOk = true;
  for (let i = 0; i < fsRounds; i++) {
    try {
      const t0 = performance.now();
      await c.call("fs/writeFile", { path: file, dataBase64: b64 });
      wr.push((FILE_BYTES / MiB) / ((performance.now() - t0) / 1000));
      const t1 = performance.now();
      const r = await c.call("fs/readFile", { path: file });
      if (b64Len(r.dataBase64) !== FILE_BYTES) throw new Error("short read");
      rd.push((FILE_BYTES / MiB) / ((performance.now() - t1) / 1000));
    } catch (err) {
      console.error(`fs methods unavailable: ${err}`);
      fsOk = false;
      break;
    }
    const t2 = performance.now();
    await readFile(file);
    rdFloor.push((FILE_BYTES / MiB) / ((performance.now() - t2) / 1000));
    // The server writes a temp file, fsyncs and renames; so does the floor.
    const t3 = performance.now();
    const fh = await open(`${file}.floor`, "w");
    await fh.writeFile(payload);
    await fh.sync();
    await fh.close();
    await rename(`${file}.floor`, file);
    wrFloor.push((FILE_BYTES / MiB) / ((performance.now() - t3) / 1000));
  }
  if (fsOk) {
    const floor = stats(rdFloor).median;
    report({
      name: "fs/writeFile 64 MiB",
      unit: "MiB/s",
      value: stats(wr).median,
      floor: stats(wrFloor).median,
      floorName: "direct write+fsync",
    });
    report({
      name: "fs/readFile 64 MiB",
      unit: "MiB/s",
      value: stats(rd).median,
      floor,
      floorName: "direct file read",
    });
    const md: number[] = [];
    const mdFloor: number[] = [];
    const { stat } = await import("node:fs/promises");
    for (let i = 0; i < (QUICK ? 50 : 300); i++) {
      const t0 = performance.now();
      await c.call("fs/getMetadata", { path: file });
      md.push(performance.now() - t0);
      const t1 = performance.now();
      await stat(file);
      mdFloor.push(performance.now() - t1);
    }
    const mdS = stats(md);
    report({
      name: "fs/getMetadata latency",
      unit: "ms",
      value: mdS.median,
      p95: mdS.p95,
      floor: stats(mdFloor).median,
      floorName: "direct stat",
    });
  }
  rmSync(dir, { recursive: true, force: true });
  rmSync(emptyDir, { recursive: true, force: true });
  await c.close();

  const totalS = (performance.now() - started) / 1000;
  console.error(`done in ${totalS.toFixed(1)} s`);
  const json = JSON.stringify(
    {
      date: new Date().toISOString(),
      server: SERVER_CMD.join(" "),
      runtime: process.versions,
      quick: QUICK,
      seconds: totalS,
      results: rows,
    },
    null,
    2,
  ) + "\n";
  if (args.values.json) process.stdout.write(json);
  if (args.values.out) writeFileSync(args.values.out, json);
}

await main();
