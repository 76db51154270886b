/**
 * `writeFile` with `append` or `offset`: bytes written into the file
 * itself rather than into a replacement, so a large file can be built up
 * in parts. Not atomic: a reader may see a part written and the next not.
 *
 * @module
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { writeAll } from "../runtime/file_write.ts";
import { writeBehind } from "../runtime/write_behind.ts";
import { orOsError, osError, refused } from "./errno.ts";
import type { WritePlacement } from "./range.ts";
import { kindOf } from "./stat.ts";

const op = "writeFile";

/**
 * Append `data` to `path`, or write it at `placement.offset`, creating the
 * file (mode 0666 minus umask) when it is missing and never truncating it.
 * Writing past the end leaves a hole that reads as zeros. Symlinks are
 * followed. A directory is `EISDIR`; a fifo, socket or device is refused
 * with `EINVAL`.
 *
 * @param path absolute, already checked
 * @throws {FileSystemError} for every failure
 *
 * @example
 * ```ts
 * import { writeInPlace } from "./write_in_place.ts";
 * const bytes = new TextEncoder().encode("more\n");
 * await writeInPlace("/tmp/log.txt", bytes, { kind: "append" });
 * await writeInPlace("/tmp/log.txt", bytes, { kind: "at", offset: 0 });
 * ```
 */
export async function writeInPlace(
  path: string,
  data: Uint8Array,
  placement: Exclude<WritePlacement, { kind: "replace" }>,
): Promise<void> {
  if (path.endsWith("/")) throw osError(op, path, { code: "EISDIR" });
  // Opened at once, written in turn: the open and its checks of one piece
  // overlap the write of the piece before, and only the writes queue.
  const opening = openForWrite(path, placement);
  opening.catch(() => {}); // awaited in the turn, and below
  try {
    await inTurn(path, async () => {
      const handle = await opening;
      // With O_APPEND the position is ignored and each write lands at the end.
      await writeAll(handle, data, placement.kind === "at" ? placement.offset : null);
    });
    // Pieces of a large file: off to the disk, and out of the cache behind
    // (write_behind.ts). After the turn, so that the next piece's write
    // need not wait for it.
    if (placement.kind === "at") {
      await writeBehind((await opening).fd, placement.offset, data.byteLength);
    }
  } catch (err) {
    throw osError(op, path, err);
  } finally {
    await (await opening.catch(() => undefined))?.close().catch(() => {});
  }
}

/** The last write queued for each path. */
const tails = new Map<string, Promise<void>>();

/**
 * Run `write` once the writes queued before it for `path` have settled.
 * Writes to one file take the kernel's inode lock one at a time anyway:
 * issued together from several threads, the waiting ones spun on it
 * (`rwsem_spin_on_owner`, 9–11% of a 1 GiB upload's server CPU), time the
 * client on the same cores lacked.
 */
function inTurn(path: string, write: () => Promise<void>): Promise<void> {
  const before = tails.get(path);
  const mine = (before ?? Promise.resolve()).then(write, write);
  const tail = mine.catch(() => {});
  tails.set(path, tail);
  void tail.then(() => {
    if (tails.get(path) === tail) tails.delete(path);
  });
  return mine;
}

/** Open `path` for a write in place and check that it is a regular file. */
async function openForWrite(
  path: string,
  placement: Exclude<WritePlacement, { kind: "replace" }>,
): Promise<fsp.FileHandle> {
  // O_NONBLOCK: opening a fifo for writing without a reader fails at once
  // (ENXIO) instead of blocking until one appears; with a reader it opens
  // and is refused below. O_NOCTTY: a terminal never becomes the server's.
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK |
    constants.O_NOCTTY | (placement.kind === "append" ? constants.O_APPEND : 0);
  const handle = await orOsError(op, path, () => fsp.open(path, flags, 0o666));
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw refused(op, path, "EINVAL", `${kindOf(st)} is not a regular file`);
    return handle;
  } catch (err) {
    await handle.close().catch(() => {});
    throw osError(op, path, err);
  }
}
