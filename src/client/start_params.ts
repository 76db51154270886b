/**
 * The `process/start` params of a spawn.
 *
 * @module
 */
import type { ProcessStartParams } from "../protocol/methods.ts";
import type { ResolvedSpawnOptions } from "./spawn_options.ts";

/** The `process/start` params for resolved spawn options; optional members only when set. */
export function startParams(processId: string, o: ResolvedSpawnOptions): ProcessStartParams {
  const params: ProcessStartParams = {
    processId,
    argv: o.argv,
    cwd: o.cwd,
    env: o.env,
    tty: o.tty,
  };
  if (o.arg0 !== null) params.arg0 = o.arg0;
  if (o.pipeStdin) params.pipeStdin = true;
  if (o.size) params.size = o.size;
  if (o.sandbox && o.sandboxPolicy) params.sandbox = o.sandbox;
  if (o.ttlMs !== undefined) params.ttlMs = o.ttlMs;
  return params;
}
