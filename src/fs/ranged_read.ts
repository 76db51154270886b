/**
 * Reading regular files for the local filesystem: opening one safely,
 * reading it whole within a limit, and reading a range of it. Shared by
 * `readFile`, `readRange` and `readStream`, so they refuse the same files
 * the same way.
 *
 * @module
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { orOsError, osError, refused } from "./errno.ts";
import { kindOf } from "./stat.ts";
import type { FileSystemError, ReadRangeResult } from "./types.ts";

/** Read size once a file turns out longer than `stat` said (e.g. `/proc` files). */
const READ_CHUNK_BYTES = 64 * 1024;

/** An open regular file and its size when it was opened. */
export interface OpenedFile {
  /** The open file; the caller closes it. */
  handle: fsp.FileHandle;
  /** Its size as `fstat` reported it (0 for `/proc` files). */
  size: number;
}

/**
 * Open `path` (absolute, checked) for reading, refusing what is not a
 * regular file: a directory is `EISDIR`, a fifo, socket or device `EINVAL`.
 *
 * @param op the operation the errors name
 * @throws {FileSystemError} when the file cannot be opened or is refused
 *
 * @example
 * ```ts
 * import { openRegularFile } from "./ranged_read.ts";
 * const { handle, size } = await openRegularFile("readFile", "/etc/hostname");
 * await handle.close();
 * console.log(size);
 * ```
 */
export async function openRegularFile(op: string, path: string): Promise<OpenedFile> {
  // O_NONBLOCK so that opening a fifo returns at once and is refused below
  // instead of hanging until some writer appears; O_NOCTTY so that opening
  // a terminal (refused below too) can never make it the controlling
  // terminal of a server that runs without one.
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
  const handle = await orOsError(op, path, () => fsp.open(path, flags));
  try {
    const st = await handle.stat();
    if (st.isDirectory()) throw osError(op, path, { code: "EISDIR" });
    if (!st.isFile()) throw refused(op, path, "EINVAL", `${kindOf(st)} is not a regular file`);
    return { handle, size: st.size };
  } catch (err) {
    await handle.close().catch(() => {});
    throw osError(op, path, err);
  }
}

/** The refusal of a read that would return more than `limit` bytes. */
export function overLimit(
  path: string,
  bytes: number,
  limit: number,
  offset = 0,
): FileSystemError {
  const what = offset === 0
    ? `file is ${bytes} bytes`
    : `the ${bytes} bytes from offset ${offset} are`;
  return refused("readFile", path, "EFBIG", `${what} over the read limit of ${limit} bytes`);
}

/**
 * Fill `buffer` from `position` on; returns how many bytes were read
 * (fewer only at the end of the file).
 */
async function fill(
  handle: fsp.FileHandle,
  buffer: Uint8Array,
  position: number,
): Promise<number> {
  let filled = 0;
  while (filled < buffer.byteLength) {
    const { bytesRead } = await handle.read(
      buffer,
      filled,
      buffer.byteLength - filled,
      position + filled,
    );
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}

/**
 * Read from `offset` to the end of the file, trusting `expected` (what
 * `fstat` promised) for the first read but never the limit: the file may
 * be longer than it said (it grew, or it is a `/proc` file of size 0).
 *
 * @throws {FileSystemError} `EFBIG` once more than `limit` bytes are found
 */
export async function readToEnd(
  handle: fsp.FileHandle,
  path: string,
  offset: number,
  expected: number,
  limit: number,
): Promise<Uint8Array> {
  const first = new Uint8Array(expected);
  const filled = await fill(handle, first, offset);
  if (filled < expected) return first.subarray(0, filled);
  const more: Uint8Array[] = [];
  let total = filled;
  for (;;) {
    const chunk = new Uint8Array(READ_CHUNK_BYTES);
    const { bytesRead } = await handle.read(chunk, 0, chunk.byteLength, offset + total);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > limit) throw overLimit(path, total, limit, offset);
    more.push(chunk.subarray(0, bytesRead));
  }
  if (more.length === 0) return first;
  const out = new Uint8Array(total);
  out.set(first, 0);
  let at = filled;
  for (const chunk of more) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/**
 * `length` bytes (or, when undefined, the rest of the file within `limit`)
 * from `offset` of an open regular file whose `fstat` size was `size`.
 *
 * `eof` is true when the read found the end of the file (a short read), or
 * when the bytes reach the size `fstat` reported: a file of reported size 0
 * (`/proc`) only ends with a short read. `size` is the reported size,
 * corrected to where the read found the end when the file changed.
 *
 * @throws {FileSystemError} `EFBIG` when `length` is undefined and the rest
 * of the file exceeds `limit`
 */
export async function readRangeOf(
  opened: OpenedFile,
  path: string,
  offset: number,
  length: number | undefined,
  limit: number,
): Promise<ReadRangeResult> {
  const { handle, size } = opened;
  if (length === undefined) {
    const rest = Math.max(0, size - offset);
    if (rest > limit) throw overLimit(path, rest, limit, offset);
    const data = await readToEnd(handle, path, offset, rest, limit);
    return { data, size: Math.max(size, offset + data.byteLength), eof: true };
  }
  const buffer = new Uint8Array(length);
  const filled = await fill(handle, buffer, offset);
  const data = filled === length ? buffer : buffer.subarray(0, filled);
  if (filled < length) {
    // The end of the file was found here (it may have shrunk or grown since fstat).
    const found = filled > 0 ? offset + filled : Math.min(size, offset);
    return { data, size: found, eof: true };
  }
  const end = offset + filled;
  const eof = size > 0 || length === 0 ? end >= size : false;
  return { data, size: Math.max(size, end), eof };
}
