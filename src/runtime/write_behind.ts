/**
 * Write-behind for files written in large pieces: each piece's pages are
 * sent to the disk as soon as it is written, and the pages of pieces
 * written a while before, by then clean, leave the page cache.
 *
 * Why: a large upload otherwise fills the page cache with pages nobody
 * reads soon, and every one of them is memory the kernel must find first.
 * On this project's VMs that is most of an upload's cost: the host takes
 * back free memory (balloon free page reporting) and hands it out again
 * page by page, so writing into new page-cache pages ran at 270–330 MiB/s
 * while the same writes with write-behind, reusing the pages they freed,
 * ran at 1.3–1.7 GiB/s (docs/performance.md). Elsewhere it keeps a big
 * upload from pushing other files out of the cache, as `dd oflag=nocache`
 * does.
 *
 * Nothing ever waits for the disk: writeback is only started, and pages
 * still dirty or being written stay where they are. On a disk slower than
 * the upload they simply stay cached, as without write-behind. Linux only;
 * Deno makes the calls through its FFI (`--allow-ffi`), Node through the
 * native addon the program provided (native_calls.ts); elsewhere writes
 * stay as they were.
 *
 * @module
 */
import process from "node:process";
import { denoLibc } from "./libc.ts";
import { nativeCall } from "./native_calls.ts";

/**
 * Pieces smaller than this are left to the kernel: they are rarely part of
 * a large file, and the two calls would cost more than they save.
 */
export const WRITE_BEHIND_MIN_BYTES = 256 * 1024;

/**
 * How far behind the end of the newest piece its predecessors' pages are
 * dropped: time enough for their writeback to finish on a disk as fast as
 * the upload (the file's last 8 MiB stay cached in any case).
 */
export const WRITE_BEHIND_LAG_BYTES = 8 * 1024 * 1024;

/** `SYNC_FILE_RANGE_WRITE`: start writeback of dirty pages, without waiting. */
const SYNC_FILE_RANGE_WRITE = 2;
/** `POSIX_FADV_DONTNEED` on Linux. */
const POSIX_FADV_DONTNEED = 4;

/**
 * The byte range whose pages a piece of `length` bytes ending at `end`
 * drops: empty in a file's first {@linkcode WRITE_BEHIND_LAG_BYTES}.
 *
 * @example
 * ```ts
 * import { dropRange } from "./write_behind.ts";
 * dropRange(16 << 20, 1 << 20); // { offset: 6 MiB, length: 2 MiB }
 * ```
 */
export function dropRange(end: number, length: number): { offset: number; length: number } {
  const to = Math.max(0, end - WRITE_BEHIND_LAG_BYTES);
  // Twice the piece: a piece still being written back at its turn gets a
  // second chance with the next one.
  const from = Math.max(0, to - 2 * length);
  return { offset: from, length: to - from };
}

/**
 * Write-behind after `length` bytes were written at `offset` of the open
 * file `fd`: start their writeback, and drop the clean pages
 * {@linkcode WRITE_BEHIND_LAG_BYTES} behind. Returns whether the calls
 * were made and succeeded; a piece under {@linkcode WRITE_BEHIND_MIN_BYTES},
 * a runtime that cannot make them, or a file that does not support them
 * (a pipe, some filesystems) returns false and changes nothing. `fd` must
 * stay open until the promise settles.
 *
 * @example
 * ```ts
 * import { open } from "node:fs/promises";
 * import { writeBehind } from "./write_behind.ts";
 * const handle = await open("/tmp/example.bin", "w");
 * const piece = new Uint8Array(1 << 20);
 * await handle.write(piece, 0, piece.byteLength, 0);
 * await writeBehind(handle.fd, 0, piece.byteLength); // true on Linux under Deno with --allow-ffi
 * await handle.close();
 * ```
 */
export async function writeBehind(fd: number, offset: number, length: number): Promise<boolean> {
  if (length < WRITE_BEHIND_MIN_BYTES || process.platform !== "linux") return false;
  const drop = dropRange(offset + length, length);
  const libc = denoLibc();
  if (libc) {
    // On two of Deno's threads at once: neither waits for the other.
    const [synced, advised] = await Promise.all([
      libc.sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE),
      drop.length > 0
        ? libc.posix_fadvise(fd, drop.offset, drop.length, POSIX_FADV_DONTNEED)
        : Promise.resolve(0),
    ]);
    return synced === 0 && advised === 0;
  }
  const call = nativeCall("writeBehind");
  if (!call) return false;
  return await call(fd, offset, length, drop.offset, drop.length).catch(() => -1) === 0;
}
