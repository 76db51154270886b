/**
 * Side-by-side benchmark of exec-server against raw floors measured in the
 * same run. Usage:
 *
 *   deno task bench [--json] [--out FILE] [--quick] [--codex] [--server-cmd "CMD ARGS"]
 *
 * The table goes to stderr; `--json` prints the results as JSON on stdout,
 * `--out FILE` writes them to a file.
 *
 * `--server-cmd` measures any implementation of the protocol the same way
 * (default: this repo's cli.ts under the running Deno). Every figure is
 * printed with its floor and the ratio between them.
 *
 * This file only runs the measurements in order; they live in `bench/`.
 *
 * @module
 */
import process from "node:process";
import { measureStreams } from "./bench/measure_streams.ts";
import { parseConfig } from "./bench/config.ts";
import { measureFilesystem } from "./bench/measure_fs.ts";
import { measureSessionRelay } from "./bench/measure_sessions.ts";
import { measureMcp } from "./bench/measure_mcp.ts";
import {
  measureColdStart,
  measureConcurrentSpawns,
  measureEcho,
  measureIdleRss,
  measurePipeThroughput,
  measurePtySpawnLatency,
  measurePtyThroughput,
  measureScriptPtyFloor,
  measureSpawnLatency,
  trackPeakRss,
} from "./bench/measure_process.ts";
import { Report } from "./bench/report.ts";
import { Conn } from "./bench/rpc_client.ts";

async function main(): Promise<void> {
  const cfg = parseConfig(process.argv.slice(2));
  const rep = new Report();
  const started = performance.now();
  console.error(`server: ${cfg.serverCmd.join(" ")}${cfg.quick ? " (quick)" : ""}`);

  await measureColdStart(cfg, rep);

  // Everything else runs against one server, in this order: the spawn
  // figures come before the throughput runs grow its memory.
  const c = new Conn(cfg.serverCmd);
  await c.init(cfg.codex);
  await measureIdleRss(c, rep);
  const spawnFloor = await measureSpawnLatency(c, cfg, rep);
  await measurePtySpawnLatency(c, cfg, rep, spawnFloor);
  await measureConcurrentSpawns(c, cfg, rep);

  const peak = trackPeakRss(c.child.pid!);
  await measurePipeThroughput(c, cfg, rep);
  await measurePtyThroughput(c, cfg, rep);
  rep.add({ name: "server RSS peak under throughput", unit: "MiB", value: peak.stop() });
  measureScriptPtyFloor(cfg, rep);

  await measureEcho(c, cfg, rep);
  await measureFilesystem(c, cfg, rep);
  await c.close();
  // Each transport gets a server of its own, started by the client library.
  await measureStreams(cfg, rep);
  await measureSessionRelay(cfg, rep);
  await measureMcp(cfg, rep);

  const totalS = (performance.now() - started) / 1000;
  console.error(`done in ${totalS.toFixed(1)} s`);
  rep.write(cfg, totalS);
}

await main();
