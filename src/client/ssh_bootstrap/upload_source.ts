/**
 * The bytes an upload puts on the wire: the binary gzip-compressed when
 * the remote can unpack it (every Linux and macOS host has `gzip`), else
 * the binary itself. A build's binary shrinks to little over a third, so
 * on a slow link compression is most of the upload's time saved.
 *
 * Compressed bytes come from `<binary>.gz` when the build left one there
 * that fits the binary, else from compressing the binary once per process
 * into memory. Compressing runs through node:zlib's stream in small
 * writes: Deno compresses each write on the main thread, and a 64 KiB
 * write at level 9 keeps the event loop (and other connections' traffic)
 * moving, where one 80 MiB call would stall it for seconds.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { concatBytes } from "../../util/bytes.ts";
import type { LocalBinary } from "./cache.ts";
import type { UploadEncoding } from "./options.ts";

/** What an upload sends: exactly `bytes` bytes, in `encoding`. */
export interface UploadSource {
  /** How the remote must unpack them. */
  encoding: UploadEncoding;
  /** How many bytes cross the wire. */
  bytes: number;
  /**
   * The bytes, in pieces of at most 1 MiB.
   *
   * @throws {Error} when a file shrank or vanished since it was measured
   */
  chunks(): AsyncGenerator<Uint8Array>;
}

const SEND_CHUNK_BYTES = 1 << 20;
const COMPRESS_CHUNK_BYTES = 64 * 1024;
// One binary per target at most: the cache is there so that connecting to
// many hosts compresses each binary once, not to hoard old builds.
const MAX_COMPRESSED = 4;
const compressed = new Map<string, Promise<Uint8Array>>();

/**
 * The upload of `binary` for a remote that accepts `accept` (`gzip` or
 * only `raw`). Raw when compressing would not make it smaller.
 *
 * @param onCompressing called when the binary must be compressed first (it takes seconds)
 * @throws {Error} when the binary cannot be read, or changed since it was hashed
 */
export async function uploadSource(
  binary: LocalBinary,
  accept: UploadEncoding,
  onCompressing?: () => void,
): Promise<UploadSource> {
  if (accept === "gzip") {
    const sidecar = await gzipSidecar(binary);
    if (sidecar !== undefined) {
      if (sidecar.size < binary.size) return fileSource(sidecar.path, sidecar.size, "gzip");
    } else {
      const data = await gzipOnce(binary, onCompressing);
      if (data.byteLength < binary.size) return memorySource(data);
    }
  }
  return fileSource(binary.path, binary.size, "raw");
}

/**
 * `<binary>.gz` when it looks made from this binary: a gzip file no older
 * than the binary whose trailer gives the binary's size (mod 2^32, as
 * gzip keeps it). It is not unpacked to make sure; a stale one that passes
 * fails the remote's sha256 check of the unpacked file instead.
 */
async function gzipSidecar(
  binary: LocalBinary,
): Promise<{ path: string; size: number } | undefined> {
  const path = `${binary.path}.gz`;
  try {
    const [st, own] = await Promise.all([stat(path), stat(binary.path)]);
    if (!st.isFile() || st.size < 18 || st.mtimeMs < own.mtimeMs) return undefined;
    const file = await open(path, "r");
    try {
      const head = new Uint8Array(2);
      const tail = new Uint8Array(4);
      await file.read(head, 0, 2, 0);
      await file.read(tail, 0, 4, st.size - 4);
      const isize = new DataView(tail.buffer).getUint32(0, true);
      if (head[0] !== 0x1f || head[1] !== 0x8b || isize !== binary.size % 2 ** 32) {
        return undefined;
      }
    } finally {
      await file.close();
    }
    return { path, size: st.size };
  } catch {
    // No usable sidecar: compress in memory instead.
    return undefined;
  }
}

/** `binary` gzipped (level 9), computed once per sha256 while the process lives. */
function gzipOnce(binary: LocalBinary, onCompressing?: () => void): Promise<Uint8Array> {
  const known = compressed.get(binary.sha256);
  if (known !== undefined) return known;
  onCompressing?.();
  const value = gzipFile(binary);
  compressed.set(binary.sha256, value);
  value.catch(() => compressed.delete(binary.sha256));
  if (compressed.size > MAX_COMPRESSED) {
    compressed.delete(compressed.keys().next().value!);
  }
  return value;
}

/** Compress the file, checking that it still has the sha256 it was described with. */
async function gzipFile(binary: LocalBinary): Promise<Uint8Array> {
  const hash = createHash("sha256");
  const parts: Uint8Array[] = [];
  await pipeline(
    createReadStream(binary.path, { highWaterMark: COMPRESS_CHUNK_BYTES }),
    async function* (source: AsyncIterable<Uint8Array>) {
      for await (const chunk of source) {
        hash.update(chunk);
        yield chunk;
      }
    },
    createGzip({ level: 9 }),
    async (source: AsyncIterable<Uint8Array>) => {
      for await (const chunk of source) parts.push(chunk);
    },
  );
  if (hash.digest("hex") !== binary.sha256) {
    throw new Error(`${binary.path} changed since it was hashed (rebuilt while connecting?)`);
  }
  return concatBytes(parts);
}

function memorySource(data: Uint8Array): UploadSource {
  return {
    encoding: "gzip",
    bytes: data.byteLength,
    async *chunks() {
      for (let at = 0; at < data.byteLength; at += SEND_CHUNK_BYTES) {
        yield data.subarray(at, at + SEND_CHUNK_BYTES);
      }
    },
  };
}

function fileSource(path: string, bytes: number, encoding: UploadEncoding): UploadSource {
  return {
    encoding,
    bytes,
    async *chunks() {
      const file = await open(path, "r");
      try {
        for (let sent = 0; sent < bytes;) {
          // A fresh buffer each time: the writer may still hold the last one.
          const chunk = new Uint8Array(Math.min(SEND_CHUNK_BYTES, bytes - sent));
          const { bytesRead } = await file.read(chunk, 0, chunk.byteLength, sent);
          if (bytesRead === 0) {
            throw new Error(`${path} shrank while it was uploaded (was ${bytes} bytes)`);
          }
          sent += bytesRead;
          yield chunk.subarray(0, bytesRead);
        }
      } finally {
        await file.close();
      }
    },
  };
}
