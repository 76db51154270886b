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
 * Each call writes at most {@linkcode WRITE_SLICE_BYTES}, and each call
 * is a trip to another thread and back.
 *
 * @module
 */
import type { FileHandle } from "node:fs/promises";
import { denoLibc } from "./libc.ts";

/**
 * The most one write call takes: a streamed upload's whole piece (1 MiB as
 * binary frames), so that each piece is one trip to a writing thread. With
 * write-behind (write_behind.ts) 1 GiB uploads ran 1.3–1.5× as fast as in
 * 128 KiB calls under Node, where each call is a trip through libuv's
 * pool; 128 KiB had been faster only while every write also had to find
 * new page-cache pages (docs/performance.md).
 */
export const WRITE_SLICE_BYTES = 1024 * 1024;

/**
 * Write up to {@linkcode WRITE_SLICE_BYTES} of `bytes` at `position`
 * (null: at the file's position, or its end when it was opened to append)
 * once; returns the bytes written.
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
  const slice = bytes.byteLength > WRITE_SLICE_BYTES ? bytes.subarray(0, WRITE_SLICE_BYTES) : bytes;
  const libc = denoLibc();
  if (libc && slice.byteLength > 0) {
    const n = Number(
      position === null
        ? await libc.write(handle.fd, slice, slice.byteLength)
        : await libc.pwrite(handle.fd, slice, slice.byteLength, position),
    );
    if (n >= 0) return n;
    // Failed: the same write through node:fs fails with its errno.
  }
  return (await handle.write(slice, 0, slice.byteLength, position)).bytesWritten;
}

/**
 * Write all of `bytes` at `position` (null: at the file's position, or its
 * end when it was opened to append), in as many {@linkcode writeOnce}
 * calls as it takes.
 *
 * @throws what the handle's `write` throws, or an `EIO` error when a call
 * wrote nothing
 *
 * @example
 * ```ts
 * import { open } from "node:fs/promises";
 * import { writeAll } from "./file_write.ts";
 * const handle = await open("/tmp/example.txt", "w");
 * await writeAll(handle, new Uint8Array(1 << 20), 0);
 * await handle.close();
 * ```
 */
export async function writeAll(
  handle: FileHandle,
  bytes: Uint8Array,
  position: number | null,
): Promise<void> {
  let done = 0;
  while (done < bytes.byteLength) {
    const n = await writeOnce(
      handle,
      bytes.subarray(done),
      position === null ? null : position + done,
    );
    if (n <= 0) throw Object.assign(new Error("write made no progress"), { code: "EIO" });
    done += n;
  }
}
