/**
 * A big file streamed up and down through the client library
 * (`FileSystem.writeStream` / `readStream`), over stdio and, for this
 * project's server, over a websocket, with the server's RSS growth during
 * each transfer. Floor: the same file copied locally with the same streams.
 * A server without ranged reads and writes (the upstream one) gets no rows.
 *
 * @module
 */
import { randomFillSync } from "node:crypto";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Environment, ExecServerClient, type FileSystem } from "../../mod.ts";
import { type BenchConfig, MiB } from "./config.ts";
import { type Report, rssMiB } from "./report.ts";

/** A connected client and the pid of the server behind it. */
interface Connected {
  client: ExecServerClient;
  serverPid: number;
  close(): Promise<void>;
}

/** The stream rows: 1 GiB (quick: 256 MiB) up and down, stdio then websocket. */
export async function measureStreams(cfg: BenchConfig, rep: Report): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-streams-"));
  const bytes = cfg.quick ? 256 * MiB : 1024 * MiB;
  try {
    const source = join(dir, "source.bin");
    await writeRandomFile(source, bytes);
    const floors = await measureFloors(source, dir, bytes, rep);
    const ways: [string, () => Promise<Connected>][] = [["stdio", () => overStdio(cfg, dir)]];
    if (!cfg.codex) ways.push(["websocket", () => overWebSocket(cfg)]);
    for (const [label, connect] of ways) {
      let conn: Connected;
      try {
        conn = await connect();
      } catch (err) {
        // The upstream server speaks only the Codex CLI's dialect.
        console.error(`fs streams: skipped, the client library cannot use this server: ${err}`);
        return;
      }
      try {
        if (conn.client.capabilities.fs === undefined) {
          console.error(`fs streams: the server announces no ranged reads; skipped`);
          return;
        }
        await measureOne(label, conn, source, join(dir, "copy.bin"), bytes, floors, rep);
      } finally {
        await conn.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureOne(
  label: string,
  conn: Connected,
  source: string,
  target: string,
  bytes: number,
  floors: Floors,
  rep: Report,
): Promise<void> {
  const local = Environment.local().fs;
  const remote = conn.client.fs;
  const size = `${bytes / MiB} MiB`;
  const up = await sampled(conn.serverPid, () => pipe(local, source, remote, target));
  const down = await sampled(conn.serverPid, () => drain(remote, target));
  for (const [dir, r] of [["up", up], ["down", down]] as const) {
    const rate = bytes / MiB / (r.ms / 1000);
    rep.add({
      name: `fs stream ${dir} ${size} (${label})`,
      unit: "MiB/s",
      value: rate,
      floor: floors[dir],
      floorName: dir === "up" ? "cat | cat > new file" : "cat | cat > /dev/null",
    });
    rep.add({ name: `  server RSS growth, ${dir} (${label})`, unit: "MiB", value: r.growth });
  }
}

/** Run `work`, sampling the server's RSS; its duration and the RSS growth. */
async function sampled(pid: number, work: () => Promise<void>) {
  const base = rssMiB(pid);
  let peak = base;
  const timer = setInterval(() => peak = Math.max(peak, rssMiB(pid)), 20);
  const t0 = performance.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  const ms = performance.now() - t0;
  return { ms, growth: Math.max(peak, rssMiB(pid)) - base };
}

async function pipe(from: FileSystem, src: string, to: FileSystem, dst: string): Promise<void> {
  await from.readStream(src).pipeTo(to.writeStream(dst));
}

async function drain(fs: FileSystem, path: string): Promise<void> {
  for await (const _ of fs.readStream(path)) { /* read and drop */ }
}

/** The raw floors of an upload and a download, in MiB/s. */
interface Floors {
  up: number;
  down: number;
}

/**
 * The same bytes through a pipe between two `cat`s, into a new file (what
 * an upload must do at least: read, pipe, write fresh pages) and into
 * `/dev/null` (a download's path); and, as a row of its own, the client
 * library's local streams copying the file.
 */
async function measureFloors(source: string, dir: string, bytes: number, rep: Report) {
  const rate = (ms: number) => bytes / MiB / (ms / 1000);
  const target = join(dir, "floor.bin");
  // Fresh page-cache pages cost several times more on a VM the first time
  // they are touched than once recycled: one throwaway copy first, so that
  // the floors and the transfers after them all write recycled pages.
  await shell(`cat '${source}' > '${target}'`);
  rmSync(target, { force: true });
  const up = rate(await timed(() => shell(`cat '${source}' | cat > '${target}'`)));
  rmSync(target, { force: true });
  const down = rate(await timed(() => shell(`cat '${source}' | cat > /dev/null`)));
  const fs = Environment.local().fs;
  const copy = rate(await timed(() => pipe(fs, source, fs, target)));
  rmSync(target, { force: true });
  rep.add({ name: `  local stream copy, ${bytes / MiB} MiB`, unit: "MiB/s", value: copy });
  return { up, down };
}

async function timed(work: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

function shell(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", script], { stdio: "inherit" });
    child.on("error", reject);
    child.on(
      "exit",
      (code) => code === 0 ? resolve() : reject(new Error(`${script}: exit ${code}`)),
    );
  });
}

async function writeRandomFile(path: string, bytes: number): Promise<void> {
  const block = new Uint8Array(MiB);
  const file = await open(path, "w");
  try {
    for (let at = 0; at < bytes; at += MiB) await file.write(randomFillSync(block));
  } finally {
    await file.close();
  }
}

/** The server on stdio, started through `sh` so that its pid is known. */
async function overStdio(cfg: BenchConfig, dir: string): Promise<Connected> {
  const pidFile = join(dir, "server.pid");
  const client = await ExecServerClient.spawnStdio(
    "sh",
    ["-c", `echo $$ > '${pidFile}'; exec "$@"`, "sh", ...cfg.serverCmd],
  );
  const serverPid = Number((await readFile(pidFile, "utf8")).trim());
  return { client, serverPid, close: () => client.close() };
}

/** The server listening on a websocket on loopback, with its generated token. */
async function overWebSocket(cfg: BenchConfig): Promise<Connected> {
  const [cmd, ...args] = cfg.serverCmd;
  const child = spawn(cmd, [...args, "--listen", "ws://127.0.0.1:0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  const listening = new Promise<[string, string]>((resolve, reject) => {
    child.stderr!.on("data", (d: string) => {
      stderr += d;
      const url = /listening on (ws:\/\/\S+)/.exec(stderr)?.[1];
      const token = /auth token: (\S+)/.exec(stderr)?.[1];
      if (url && token) resolve([url, token]);
    });
    child.once("exit", () => reject(new Error(`websocket server exited:\n${stderr}`)));
  });
  const [url, token] = await listening;
  const client = await ExecServerClient.connectWebSocket(url, { token });
  return {
    client,
    serverPid: child.pid!,
    close: async () => {
      await client.close();
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}
