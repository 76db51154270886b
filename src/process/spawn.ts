/**
 * One entry point for both process backends. The PTY backend is imported
 * on first use so that pipe-only and client-only users never load node-pty.
 *
 * @module
 */
import { spawnPipeProcess } from "./pipe_process.ts";
import type { ProcessHandle, SpawnRequest } from "./types.ts";

/**
 * Start a child on a PTY (`req.tty`) or on pipes.
 *
 * @example
 * ```ts
 * import { spawnProcess } from "./spawn.ts";
 * const p = await spawnProcess({
 *   argv: ["echo", "hi"], cwd: "/", env: { PATH: "/usr/bin:/bin" },
 *   tty: false, pipeStdin: false, size: { rows: 24, cols: 80 },
 *   drainQuietMs: 250, onOutput: (stream, bytes) => console.log(stream, bytes),
 * });
 * await p.finished; // { exitCode: 0, signal: null }
 * ```
 */
export async function spawnProcess(req: SpawnRequest): Promise<ProcessHandle> {
  if (!req.tty) return await spawnPipeProcess(req);
  const { spawnPtyProcess } = await import("./pty_process.ts");
  return await spawnPtyProcess(req);
}
