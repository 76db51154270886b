/**
 * The process measurements: cold start, memory, spawn latency, concurrent
 * spawns, output throughput and keystroke echo. Each runs its floor in the
 * same loop, interleaved with the server's rounds, so both see the same
 * machine load.
 *
 * @module
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchConfig, ENV, MiB } from "./config.ts";
import {
  directSpawn,
  rawPipeRead,
  rawPtyEcho,
  rawPtyRead,
  runtimeStartMs,
  scriptPtyRead,
} from "./floors.ts";
import { type Report, rssMiB, stats } from "./report.ts";
import { Conn, runProcess } from "./rpc_client.ts";

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Spawn to `initialize` response; floor: the runtime running an empty script. */
export async function measureColdStart(cfg: BenchConfig, rep: Report): Promise<void> {
  const emptyDir = mkdtempSync(join(tmpdir(), "bench-"));
  const empty = join(emptyDir, "empty.ts");
  writeFileSync(empty, "");
  const cold: number[] = [];
  const coldFloor: number[] = [];
  try {
    for (let i = 0; i < (cfg.quick ? 3 : 8); i++) {
      const t0 = performance.now();
      const c = new Conn(cfg.serverCmd);
      await c.init(cfg.codex);
      cold.push(performance.now() - t0);
      await c.close();
      coldFloor.push(runtimeStartMs(empty));
    }
  } finally {
    rmSync(emptyDir, { recursive: true, force: true });
  }
  // The first round of each pays one-off costs (the runtime's caches), so
  // it is left out.
  const coldS = stats(cold.slice(1));
  rep.add({
    name: "cold start to initialize",
    unit: "ms",
    value: coldS.median,
    p95: coldS.p95,
    floor: stats(coldFloor.slice(1)).median,
    floorName: "runtime, empty script",
    target: "<= 80 ms",
  });
}

/** The server's resident set once it has settled after the handshake. */
export async function measureIdleRss(c: Conn, rep: Report): Promise<void> {
  await sleep(300);
  rep.add({
    name: "server RSS idle",
    unit: "MiB",
    value: rssMiB(c.child.pid!),
    target: "<= 60 MiB",
  });
}

/**
 * `true` started and awaited one at a time, with a pipe; floors: a direct
 * spawn, and (as a row of its own) a direct spawn in its own session.
 * Returns the direct-spawn median, the floor of the PTY variant too.
 */
export async function measureSpawnLatency(c: Conn, cfg: BenchConfig, rep: Report): Promise<number> {
  // Warm-up rounds, not counted.
  for (let i = 0; i < 10; i++) await runProcess(c, ["true"], false);
  const sp: number[] = [];
  const spFloor: number[] = [];
  const spSessionFloor: number[] = [];
  for (let i = 0; i < (cfg.quick ? 30 : 100); i++) {
    sp.push((await runProcess(c, ["true"], false)).ms);
    spFloor.push(await directSpawn(["true"]));
    spSessionFloor.push(await directSpawn(["true"], true));
  }
  const spS = stats(sp);
  const floorS = stats(spFloor);
  rep.add({
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
  rep.add({
    name: "  floor: direct spawn, own session",
    unit: "ms",
    value: sessionS.median,
    p95: sessionS.p95,
  });
  return floorS.median;
}

/** `true` started one at a time on a PTY; `floor` is the direct-spawn median. */
export async function measurePtySpawnLatency(
  c: Conn,
  cfg: BenchConfig,
  rep: Report,
  floor: number,
): Promise<void> {
  const ptySp: number[] = [];
  // Fewer rounds than the pipe variant: at most 50.
  for (let i = 0; i < Math.min(cfg.quick ? 30 : 100, 50); i++) {
    ptySp.push((await runProcess(c, ["true"], true)).ms);
  }
  const ptySpS = stats(ptySp);
  rep.add({
    name: "spawn true (pty), sequential",
    unit: "ms",
    value: ptySpS.median,
    p95: ptySpS.p95,
    floor,
    floorName: "direct spawn",
  });
}

/** 100 `true` started at once, until all have exited; floor: 100 direct spawns. */
export async function measureConcurrentSpawns(
  c: Conn,
  cfg: BenchConfig,
  rep: Report,
): Promise<void> {
  // Let the exited processes above expire first, so that a server with a
  // 256-process limit has room for 100 at once; likewise between rounds.
  await sleep(400);
  const conc: number[] = [];
  const concFloor: number[] = [];
  for (let r = 0; r < (cfg.quick ? 2 : 5); r++) {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 100 }, () => runProcess(c, ["true"], false)));
    conc.push(performance.now() - t0);
    const t1 = performance.now();
    await Promise.all(Array.from({ length: 100 }, () => directSpawn(["true"])));
    concFloor.push(performance.now() - t1);
    await sleep(400);
  }
  const concS = stats(conc);
  rep.add({
    name: "100 concurrent spawns, all exited",
    unit: "ms",
    value: concS.median,
    p95: concS.p95,
    floor: stats(concFloor).median,
    floorName: "direct spawn x100",
    target: "<= 1000 ms",
  });
}

/**
 * Samples the server's resident set every 50 ms until `stop`, which returns
 * the peak: the throughput runs are where it grows.
 */
export function trackPeakRss(pid: number): { stop(): number } {
  let peak = rssMiB(pid);
  const timer = setInterval(() => peak = Math.max(peak, rssMiB(pid)), 50);
  return {
    stop(): number {
      clearInterval(timer);
      return peak;
    },
  };
}

async function measureThroughput(
  c: Conn,
  cfg: BenchConfig,
  rep: Report,
  tty: boolean,
): Promise<void> {
  const bytes = cfg.streamBytes;
  const samples: number[] = [];
  const floors: number[] = [];
  for (let i = 0; i < (cfg.quick ? 2 : 3); i++) {
    const r = await runProcess(c, ["head", "-c", String(bytes), "/dev/zero"], tty);
    // A fast figure that dropped output would be worthless.
    if (r.bytes !== bytes) throw new Error(`lost output: ${r.bytes} of ${bytes}`);
    samples.push((r.bytes / MiB) / (r.ms / 1000));
    floors.push(tty ? await rawPtyRead(bytes) : await rawPipeRead(bytes));
  }
  rep.add({
    name: `${tty ? "pty" : "pipe"} throughput (${bytes / MiB} MiB)`,
    unit: "MiB/s",
    value: stats(samples).median,
    p95: undefined,
    floor: stats(floors).median,
    floorName: tty ? "raw pty read" : "raw pipe read",
    target: tty ? ">= 200 MiB/s" : ">= 400 MiB/s",
  });
}

/** `head -c N /dev/zero` through a pipe; floor: reading the same pipe directly. */
export function measurePipeThroughput(c: Conn, cfg: BenchConfig, rep: Report): Promise<void> {
  return measureThroughput(c, cfg, rep, false);
}

/** `head -c N /dev/zero` through a PTY; floor: reading a PTY through the same addon. */
export function measurePtyThroughput(c: Conn, cfg: BenchConfig, rep: Report): Promise<void> {
  return measureThroughput(c, cfg, rep, true);
}

/** The kernel's own PTY ceiling, as a row of its own (when script(1) exists). */
export function measureScriptPtyFloor(cfg: BenchConfig, rep: Report): void {
  const value = scriptPtyRead(cfg.streamBytes);
  if (value === undefined) return;
  rep.add({ name: "  floor: pty read by script(1), C", unit: "MiB/s", value });
}

/** Round trips, in ms, of one keystroke written to `cat` on a PTY until its echo. */
export async function echoSamples(c: Conn, rounds: number, echoId = "echo"): Promise<number[]> {
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
  // The first 10 rounds warm up and are not counted.
  for (let i = 0; i < rounds + 10; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      echoWaiter = r;
      // The keystroke "x", base64-encoded as the protocol carries it.
      void c.call("process/write", { processId: echoId, chunk: "eA==" });
    });
    if (i >= 10) echo.push(performance.now() - t0);
  }
  await c.call("process/terminate", { processId: echoId });
  c.handlers.delete(echoId);
  return echo;
}

/** One keystroke written to `cat` on a PTY until its echo; floor: the same on a raw PTY. */
export async function measureEcho(c: Conn, cfg: BenchConfig, rep: Report): Promise<void> {
  const rounds = cfg.quick ? 50 : 200;
  const echo = await echoSamples(c, rounds);
  const echoS = stats(echo);
  rep.add({
    name: "pty keystroke echo round trip",
    unit: "ms",
    value: echoS.median,
    p95: echoS.p95,
    floor: stats(await rawPtyEcho(rounds)).median,
    floorName: "raw pty echo",
    target: "p50 <= 1 ms",
  });
}
