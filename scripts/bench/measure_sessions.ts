/**
 * What resuming a session through another server costs: a session that a
 * server keeps after its stdin closed (an ssh that dropped) is resumed by
 * a new stdio server, which relays to it over the user's session socket.
 * Its pipe throughput and keystroke echo are measured beside the same
 * figures of a session attached directly, in alternating rounds of one
 * run. Only this project's server keeps sessions for other servers; for
 * any other `--server-cmd` the rows are left out, saying why.
 *
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchConfig } from "./config.ts";
import { echoSamples } from "./measure_process.ts";
import { type Report, stats } from "./report.ts";
import { Conn, runProcess } from "./rpc_client.ts";

const MiB = 1024 * 1024;

/** Start a server and open (or resume) a v0 session on it. */
async function sessionConn(cmd: string[], resume?: string): Promise<[Conn, string | undefined]> {
  const c = new Conn(cmd);
  const init = await c.call("initialize", {
    clientName: "bench",
    session: resume === undefined ? {} : { resume },
  });
  c.notify("initialized", {});
  return [c, init.session?.fromOtherServers === true ? init.session.id : undefined];
}

/** End a server that keeps a session: SIGTERM, and wait for its exit. */
function stop(c: Conn): Promise<void> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    c.child.once("exit", () => resolve());
    c.child.kill("SIGTERM");
  });
}

/** Pipe MiB/s through `c`, checking that nothing was lost. */
async function throughput(c: Conn, bytes: number): Promise<number> {
  const r = await runProcess(c, ["head", "-c", String(bytes), "/dev/zero"], false);
  if (r.bytes !== bytes) throw new Error(`lost output: ${r.bytes} of ${bytes}`);
  return (r.bytes / MiB) / (r.ms / 1000);
}

/** The relayed figures, each with the direct one of the same run as its floor. */
export async function measureSessionRelay(cfg: BenchConfig, rep: Report): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "bench-sessions-"));
  const cmd = [...cfg.serverCmd, "--session-dir", dir, "--session-grace-ms", "600000"];
  const [holder, id] = await sessionConn(cmd).catch(() => [undefined, undefined] as const);
  if (!holder || id === undefined) {
    console.error("session relay: skipped (the server keeps no sessions for other servers)");
    holder?.child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
    return;
  }
  // The holder's client goes away; the session stays, and a new server relays to it.
  holder.child.stdin!.end();
  const [relayed] = await sessionConn(cmd, id);
  const [direct] = await sessionConn(cmd);
  try {
    const bytes = cfg.streamBytes;
    const viaRelay: number[] = [];
    const viaDirect: number[] = [];
    for (let i = 0; i < (cfg.quick ? 2 : 3); i++) {
      viaDirect.push(await throughput(direct, bytes));
      viaRelay.push(await throughput(relayed, bytes));
    }
    rep.add({
      name: `session pipe throughput, resumed via relay (${bytes / MiB} MiB)`,
      unit: "MiB/s",
      value: stats(viaRelay).median,
      floor: stats(viaDirect).median,
      floorName: "same, attached directly",
      target: "ratio >= 0.8",
    });
    const rounds = cfg.quick ? 50 : 200;
    const echoDirect = await echoSamples(direct, rounds, "echo-direct");
    const echoRelay = stats(await echoSamples(relayed, rounds, "echo-relay"));
    rep.add({
      name: "session echo round trip, resumed via relay",
      unit: "ms",
      value: echoRelay.median,
      p95: echoRelay.p95,
      floor: stats(echoDirect).median,
      floorName: "same, attached directly",
    });
  } finally {
    await relayed.close();
    // The other two keep their sessions for the grace window: stop them now.
    await Promise.all([stop(direct), stop(holder)]);
    await rm(dir, { recursive: true, force: true });
  }
}
