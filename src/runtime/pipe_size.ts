/**
 * Bigger pipe buffers for the server's stdio, where the runtime can ask.
 *
 * A Linux pipe holds 64 KiB. A streamed file moves as ~700 KB answers, so
 * each one filled and drained the pipe to its client ten times or more,
 * and each time both processes had to wake. With 1 MiB pipes the same
 * downloads measured 15–35% faster on this project's 2-core machines
 * (docs/performance.md). Deno makes the call (`fcntl`) through its FFI when
 * `--allow-ffi` is granted. Node has no such call: a server under Node
 * (the binary, the npm package) makes it through a native addon when one
 * was provided (native_calls.ts); elsewhere this does nothing.
 *
 * @module
 */
import process from "node:process";
import { denoLibc } from "./libc.ts";
import { nativeCall } from "./native_calls.ts";

/** `F_SETPIPE_SZ` on Linux. */
const F_SETPIPE_SZ = 1031;

/** The size asked for: Linux's default `/proc/sys/fs/pipe-max-size`. */
export const PIPE_BYTES = 1024 * 1024;

/** The call that sets a pipe's size, when this runtime can make it. */
function pipeSizer(): ((fd: number, bytes: number) => number) | undefined {
  if (process.platform !== "linux") return undefined;
  const libc = denoLibc();
  if (libc) return (fd, bytes) => libc.fcntl(fd, F_SETPIPE_SZ, bytes);
  return nativeCall("setPipeSize");
}

/**
 * Ask for a `bytes`-sized buffer on the pipe `fd` (a pipe's either end).
 * Returns the size the kernel granted, or undefined when the runtime
 * cannot ask or the kernel refused (a user's pipe quota, a smaller
 * `pipe-max-size`, a descriptor that is no pipe): the pipe then works as
 * it was.
 *
 * @example
 * ```ts
 * import { enlargePipe } from "./pipe_size.ts";
 * enlargePipe(1, 1 << 20); // 1048576 under Deno with --allow-ffi on Linux
 * ```
 */
export function enlargePipe(fd: number, bytes: number = PIPE_BYTES): number | undefined {
  const call = pipeSizer();
  if (!call) return undefined;
  const granted = call(fd, bytes);
  return granted > 0 ? granted : undefined;
}

/**
 * The most pipe buffer that {@linkcode enlargeStreamPipe} asks for at once,
 * over all the pipes it enlarged that are still open: 16 MiB. Linux counts
 * pipe pages per user, and once a user holds more than
 * `/proc/sys/fs/pipe-user-pages-soft` (64 MiB by default) every new pipe of
 * theirs, in any program, is cut to a page or two. A client that spawns
 * many servers stays well under it: the first eight get 1 MiB pipes, the
 * rest keep the kernel's default until some close.
 */
export const CHILD_PIPE_BUDGET: number = 16 * PIPE_BYTES;

let childPipeBytes = 0;

interface StreamLike {
  _handle?: { fd?: unknown } | null;
  once?(event: "close", listener: () => void): unknown;
}

/**
 * {@linkcode enlargePipe} for the pipe under a `node:child_process` stream
 * (a child's stdin or stdout): either end of a pipe may ask. A server that
 * cannot ask for itself (the binary runs on Node) then reads and writes
 * up to 1 MiB at once instead of 64 KiB when a Deno client spawned it.
 * The descriptor is the stream handle's `fd`, which Deno shows (Node does
 * too, but cannot make the call). Within {@linkcode CHILD_PIPE_BUDGET}:
 * what a pipe was granted counts until its stream closes.
 *
 * @example
 * ```ts
 * import { spawn } from "node:child_process";
 * import { enlargeStreamPipe } from "./pipe_size.ts";
 * const child = spawn("cat", { stdio: ["pipe", "pipe", "inherit"] });
 * enlargeStreamPipe(child.stdin); // 1048576 under Deno with --allow-ffi on Linux
 * child.stdin.end();
 * ```
 */
export function enlargeStreamPipe(stream: unknown, bytes: number = PIPE_BYTES): number | undefined {
  const s = stream as StreamLike | null;
  const fd = s?._handle?.fd;
  if (typeof fd !== "number" || fd < 0 || typeof s?.once !== "function") return undefined;
  if (childPipeBytes + bytes > CHILD_PIPE_BUDGET) return undefined;
  const granted = enlargePipe(fd, bytes);
  if (granted === undefined) return undefined;
  childPipeBytes += granted;
  s.once("close", () => childPipeBytes -= granted);
  return granted;
}
