/**
 * A child process on pipes, as each runtime can best start and read one.
 * Under Deno its output is read with a BYOB reader into one buffer per
 * stream that is reused for every read (small at first, full-size from a
 * pool once the stream is busy), so streaming a process's output
 * allocates nothing per read (Deno's `node:child_process` allocated a fresh
 * buffer outside the heap for every read, and the collector, which does not
 * see that memory grow, left hundreds of megabytes of them behind). Node
 * reads through `node:child_process`, whose buffers it does account for.
 *
 * @module
 */
import { isDeno } from "./runtime.ts";
import type { PipeChild, PipeChildOptions } from "./pipe_child_types.ts";
import { spawnNodePipeChild } from "./node_pipe_child.ts";
import { spawnDenoPipeChild } from "./deno_pipe_child.ts";

export type {
  OutputIndex,
  PipeChild,
  PipeChildExit,
  PipeChildOptions,
  PipeChildReader,
} from "./pipe_child_types.ts";
export { PipeSpawnError } from "./pipe_child_types.ts";

/**
 * Start `opts.argv` on pipes in a new session. Resolves once the child
 * exists.
 *
 * @throws {PipeSpawnError} when it could not be started
 * @example
 * ```ts
 * import { spawnPipeChild } from "./pipe_child.ts";
 * const child = await spawnPipeChild({
 *   argv: ["echo", "hi"], cwd: "/", env: { PATH: "/usr/bin:/bin" }, stdin: false,
 * });
 * child.read({ onChunk: (i, b) => console.log(i, b.length), onEnd: () => {} });
 * await child.exited; // { code: 0, signal: null }
 * ```
 */
export function spawnPipeChild(opts: PipeChildOptions): Promise<PipeChild> {
  // Deno's own spawn cannot set a different argv[0]; the rare start that
  // asks for one goes through node:child_process there too.
  const arg0Differs = opts.arg0 != null && opts.arg0 !== opts.argv[0];
  if (isDeno && !arg0Differs) return spawnDenoPipeChild(opts);
  return spawnNodePipeChild(opts);
}
