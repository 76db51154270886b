/**
 * Writes into an open file that do not hold up the event loop.
 *
 * Node runs `node:fs` writes on libuv's thread pool; Deno runs them on its
 * main thread (an `strace` of the server shows `pwrite64` from the thread
 * that polls stdin). A write into page-cache pages the kernel must first
 * find costs 2.5–4 ms per MiB on this project's VMs, and for that long a
 * Deno server read nothing: an upload over stdio stalled its own pipe at
 * every piece. Under Deno with `--allow-ffi`, libc's `write`/`pwrite` run
 * as nonblocking FFI calls on a thread of Deno's own instead; elsewhere,
 * and to learn why a write failed (errno stays on that thread), the
 * handle's own `write` does it.
 *
 * @module
 */
import type { FileHandle } from "node:fs/promises";
import { denoLibc } from "./libc.ts";

/**
 * Write `bytes` at `position` (null: at the file's position, or its end
 * when it was opened to append) once; returns the bytes written.
 *
 * @throws what the handle's `write` throws for the same call
 *
 * @example
 * ```ts
 * import { open } from "node:fs/promises";
 * import { writeOnce } from "./file_write.ts";
 * const handle = await open("/tmp/example.txt", "w");
 * await writeOnce(handle, new TextEncoder().encode("hi\n"), 0); // 3
 * await handle.close();
 * ```
 */
export async function writeOnce(
  handle: FileHandle,
  bytes: Uint8Array,
  position: number | null,
): Promise<number> {
  const libc = denoLibc();
  if (libc && bytes.byteLength > 0) {
    const n = Number(
      position === null
        ? await libc.write(handle.fd, bytes, bytes.byteLength)
        : await libc.pwrite(handle.fd, bytes, bytes.byteLength, position),
    );
    if (n >= 0) return n;
    // Failed: the same write through node:fs fails with its errno.
  }
  return (await handle.write(bytes, 0, bytes.byteLength, position)).bytesWritten;
}
