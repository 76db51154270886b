/**
 * How the remote streams size their requests: what the server announced
 * it supports, and the piece sizes that fit its limits. Pure, so the rules
 * are tested without a server.
 *
 * @module
 */
import { checkChunkBytes } from "../fs/chunker.ts";

/**
 * The default piece of a remote read stream: one request reads this many
 * bytes. Measured on 2 vCPUs, 256 MiB: with a Node server (the binary)
 * larger pieces move more (256 KiB: 92-102 MiB/s, 512 KiB: 109-113, 1 MiB:
 * 116-142; each request pays an open, fstat and close in Node's thread
 * pool); with a Deno server they were alike. But above ~755 KiB Node makes
 * the base64 an external string, freed only by a full collection: 1 MiB
 * pieces grew the binary by 66-74 MiB over a 1 GiB download (512 KiB: 5-26).
 */
export const REMOTE_READ_BYTES: number = 512 * 1024;

/**
 * The default piece of a remote write stream. Larger pieces were faster
 * here too (Node server: 62-67 -> 83-86 MiB/s with 1 MiB), but the server
 * holds every piece in flight several times over (the line, its text, its
 * base64, its bytes): 1 MiB pieces grew it by 66 MiB over a 512 MiB upload
 * on a websocket, past the 64 MiB this project allows; 256 KiB, ~40.
 */
export const REMOTE_WRITE_BYTES: number = 256 * 1024;

/**
 * The default piece of a remote write stream whose pieces travel as binary
 * frames: the server then holds each piece about once, and a request's
 * fixed costs (an open, fstat and close) weigh more than its bytes. Deno
 * server, 256 MiB through stdio: 256 KiB 253-278 MiB/s, 1 MiB 296-314,
 * 2 MiB 184-203 (4 pieces in flight outgrow the 1 MiB pipe); the binary:
 * 216-253, 263-296, 203-221.
 */
export const REMOTE_WRITE_BINARY_BYTES: number = 1024 * 1024;

/**
 * The default number of requests a remote stream keeps in flight: enough
 * to keep both ends busy on one machine or a LAN. Over a long link the
 * bytes in flight (window x piece) bound the rate to about that much per
 * round trip; `RemoteFileSystem`'s `window` option raises it.
 */
export const REMOTE_WINDOW = 4;

/** Room left in a request for everything but the base64 text (method, id, path). */
const ENVELOPE_BYTES = 1024;

/** The `fs` extensions a server announced in `capabilities.fs`. */
export interface FsSupport {
  /** `fs/readFile` takes `offset` and `length`. */
  rangedRead: boolean;
  /** `fs/writeFile` takes `append`. */
  append: boolean;
  /** `fs/writeFile` takes `offset`. */
  writeOffset: boolean;
  /** `fs/rename` exists. */
  rename: boolean;
  /** `capabilities.limits.maxReadFileBytes`, when announced. */
  maxReadFileBytes: number | undefined;
  /** `capabilities.limits.maxMessageBytes`, when announced. */
  maxMessageBytes: number | undefined;
}

const positive = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;

/**
 * What `capabilities` (an `initialize` result's) says of the `fs`
 * extensions; a plain v0 server supports none of them.
 *
 * @example
 * ```ts
 * import { fsSupport } from "./stream_plan.ts";
 * fsSupport({ fs: { rangedRead: true } }).rangedRead; // true
 * fsSupport({}).rename; // false
 * ```
 */
export function fsSupport(capabilities: Record<string, unknown> | undefined): FsSupport {
  const fs = (capabilities?.fs ?? {}) as Record<string, unknown>;
  const limits = (capabilities?.limits ?? {}) as Record<string, unknown>;
  return {
    rangedRead: fs.rangedRead === true,
    append: fs.append === true,
    writeOffset: fs.writeOffset === true,
    rename: fs.rename === true,
    maxReadFileBytes: positive(limits.maxReadFileBytes),
    maxMessageBytes: positive(limits.maxMessageBytes),
  };
}

/**
 * The bytes one ranged read asks for: `requested` (default
 * {@linkcode REMOTE_READ_BYTES}), at most the server's read limit, and at
 * least 1.
 *
 * @throws {RangeError} for a bad `requested`
 *
 * @example
 * ```ts
 * import { readPieceBytes } from "./stream_plan.ts";
 * readPieceBytes(undefined, 1024 * 1024); // 1048576
 * ```
 */
export function readPieceBytes(requested: number | undefined, maxReadFileBytes?: number): number {
  const wanted = checkChunkBytes(requested, REMOTE_READ_BYTES);
  return Math.max(1, Math.min(wanted, maxReadFileBytes ?? wanted));
}

/**
 * The most bytes one `fs/writeFile` to `path` can carry under the message
 * limit: its base64 text, the path (JSON-escaped, up to 6 bytes a
 * character) and the envelope must fit; at least 3.
 *
 * @example
 * ```ts
 * import { messageRoomBytes } from "./stream_plan.ts";
 * messageRoomBytes(64 * 1024, "/tmp/x"); // 48357
 * ```
 */
export function messageRoomBytes(maxMessageBytes: number, path: string): number {
  return Math.max(3, Math.floor(roomBesidePath(maxMessageBytes, path) / 4) * 3);
}

/** The message limit less the envelope and `path` (JSON-escaped, up to 6 bytes a character). */
function roomBesidePath(maxMessageBytes: number, path: string): number {
  return maxMessageBytes - ENVELOPE_BYTES - path.length * 6;
}

/**
 * The bytes one positional write carries: `requested` (default
 * {@linkcode REMOTE_WRITE_BYTES}, or {@linkcode REMOTE_WRITE_BINARY_BYTES}
 * as binary frames), cut to what fits in one message to the server (see
 * {@linkcode messageRoomBytes}; a binary frame has room for the message
 * limit less the envelope).
 *
 * @throws {RangeError} for a bad `requested`
 *
 * @example
 * ```ts
 * import { writePieceBytes } from "./stream_plan.ts";
 * writePieceBytes(undefined, 64 * 1024, "/tmp/x"); // 48357
 * ```
 */
export function writePieceBytes(
  requested: number | undefined,
  maxMessageBytes: number | undefined,
  path: string,
  binaryFrames = false,
): number {
  const wanted = checkChunkBytes(
    requested,
    binaryFrames ? REMOTE_WRITE_BINARY_BYTES : REMOTE_WRITE_BYTES,
  );
  if (maxMessageBytes === undefined) return wanted;
  // A binary frame's payload is the bytes themselves, next to the header.
  const room = binaryFrames
    ? Math.max(1, roomBesidePath(maxMessageBytes, path))
    : messageRoomBytes(maxMessageBytes, path);
  return Math.min(wanted, room);
}
