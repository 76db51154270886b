/**
 * `run()`: spawn, feed stdin, collect the output and the exit, with an
 * optional kill after a time limit. One body for remote and local.
 *
 * @module
 */
import { ProcessError } from "./errors.ts";
import type { ExecProcess, RunOptions, RunResult } from "./process_handle.ts";
import type { SpawnOptions } from "./spawn_options.ts";

/**
 * The shared body of {@linkcode ExecProcess.run}: spawn, feed stdin,
 * collect, with an optional kill after `timeoutMs`.
 */
export async function runProcess(
  exec: Pick<ExecProcess, "spawn">,
  command: string[] | SpawnOptions,
  options: RunOptions = {},
): Promise<RunResult> {
  const spawnOptions: SpawnOptions = Array.isArray(command) ? { argv: command } : { ...command };
  const { stdin, timeoutMs } = options;
  if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs < 0)) {
    throw new TypeError(`timeoutMs must be a non-negative number, got ${String(timeoutMs)}`);
  }
  if (stdin !== undefined && !spawnOptions.tty) spawnOptions.pipeStdin = true;
  const proc = await exec.spawn(spawnOptions);
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (timeoutMs !== undefined) {
    timer = setTimeout(() => {
      timedOut = true;
      proc.terminate().catch(() => {});
    }, timeoutMs);
  }
  try {
    if (stdin !== undefined) {
      // A process may exit without reading its input; like a shell pipeline,
      // that is not the caller's error, and the exit status tells the story.
      try {
        if ((typeof stdin === "string" ? stdin.length : stdin.byteLength) > 0) {
          await proc.write(stdin);
        }
        await proc.closeStdin();
      } catch (err) {
        if (!isStdinGone(err)) throw err;
      }
    }
    const result = await proc.collect();
    return { ...result, timedOut };
  } finally {
    clearTimeout(timer);
  }
}

function isStdinGone(err: unknown): boolean {
  return err instanceof ProcessError;
}
