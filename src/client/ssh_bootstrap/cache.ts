/**
 * What the bootstrap needs to know about the local binary (size, sha256,
 * platform), remembered per file version: hashing a large binary on every
 * `connectSsh` would cost more than the connection itself.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { type BinaryPlatform, detectBinaryPlatforms } from "./platform.ts";

/** What {@linkcode describeLocalBinary} learns about a binary. */
export interface LocalBinary {
  /** The absolute path. */
  path: string;
  /** The size in bytes. */
  size: number;
  /** The sha256, lowercase hex. */
  sha256: string;
  /** The platforms it runs on; `"any"` for a script; undefined when unknown. */
  platforms: BinaryPlatform[] | "any" | undefined;
}

const cache = new Map<string, { stamp: string; value: Promise<LocalBinary> }>();

/**
 * Hash a binary and read its platform, once per path and version of the
 * file (a rebuilt file, with another size, mtime or inode, is read again).
 *
 * @throws {Error} when the file cannot be read or is not a regular file
 */
export async function describeLocalBinary(path: string): Promise<LocalBinary> {
  const abs = resolve(path);
  const st = await stat(abs);
  if (!st.isFile()) throw new Error(`${abs} is not a regular file`);
  const stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
  const known = cache.get(abs);
  if (known?.stamp === stamp) return known.value;
  const value = hashFile(abs);
  cache.set(abs, { stamp, value });
  value.catch(() => cache.delete(abs));
  return value;
}

async function hashFile(path: string): Promise<LocalBinary> {
  const hash = createHash("sha256");
  let header: Uint8Array | undefined;
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const bytes = chunk as Uint8Array;
    header ??= new Uint8Array(bytes.subarray(0, 4096));
    hash.update(bytes);
    size += bytes.byteLength;
  }
  header ??= new Uint8Array(0);
  return { path, size, sha256: hash.digest("hex"), platforms: detectBinaryPlatforms(header) };
}
