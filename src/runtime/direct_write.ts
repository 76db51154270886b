/**
 * Small writes to a pipe made on the calling thread, where they cannot
 * block.
 *
 * Deno writes to its stdout on a thread of its pool: each answer and each
 * notification went out only after a futex wake of that thread and an
 * eventfd wake back (an `strace` of a PTY echo shows both for every
 * message), tens of microseconds per message on this project's 2-core
 * VMs, which a keystroke's echo pays twice (the write's answer, then the
 * output). A write that fits in the pipe's free room copies into it
 * without sleeping, so for small messages, when the pipe has room, this
 * writes at once through FFI; anything else goes the runtime's way. The
 * descriptor stays blocking (it may be shared with other programs, and
 * Deno's own writes expect it so).
 *
 * @module
 */
import { denoLibc } from "./libc.ts";

/** Messages up to this size are written directly when the pipe has room. */
export const DIRECT_WRITE_BYTES = 16 * 1024;

/** `F_GETPIPE_SZ` and `FIONREAD` on Linux. */
const F_GETPIPE_SZ = 1032;
const FIONREAD = 0x541b;
/** Room kept beyond the message: partly filled pages at either end of the pipe's ring. */
const SLACK_BYTES = 2 * 4096;

/**
 * A writer for the pipe `fd` that writes `bytes` at once when they are
 * small and fit in the pipe's free room, returning how many it wrote (0:
 * none, write them the runtime's way). Null when `fd` is no pipe or the
 * runtime cannot make the calls (not Deno with `--allow-ffi` on Linux).
 *
 * @example
 * ```ts
 * import { directPipeWriter } from "./direct_write.ts";
 * const direct = directPipeWriter(1);
 * const bytes = new TextEncoder().encode("hi\n");
 * if (!direct || direct(bytes) < bytes.byteLength) {
 *   // write the rest another way
 * }
 * ```
 */
export function directPipeWriter(fd: number): ((bytes: Uint8Array) => number) | null {
  const libc = denoLibc();
  // Only a pipe has a pipe size (anything else: EBADF or EINVAL).
  if (!libc || libc.fcntl(fd, F_GETPIPE_SZ, 0) <= 0) return null;
  const unread = new Int32Array(1);
  return (bytes) => {
    const length = bytes.byteLength;
    if (length === 0 || length > DIRECT_WRITE_BYTES) return 0;
    // Asked each time: the reading end may resize the pipe too.
    const size = libc.fcntl(fd, F_GETPIPE_SZ, 0);
    if (size <= 0 || libc.ioctl(fd, FIONREAD, unread) !== 0) return 0;
    if (size - unread[0] < length + SLACK_BYTES) return 0;
    const n = Number(libc.writeHere(fd, bytes, length));
    return n > 0 ? n : 0;
  };
}
