/**
 * Strict standard base64 (with padding). Where the runtime has the native
 * `Uint8Array.prototype.toBase64` / `Uint8Array.fromBase64` (Deno 2.9),
 * they are used: measured here at about 16 GB/s against 1.5 GB/s for
 * `Buffer` under Deno, on the hot path of every output chunk. Elsewhere
 * (Node 20) `Buffer` does the work and a regular expression the checking.
 *
 * @module
 */
import { Buffer } from "node:buffer";

interface NativeBase64 {
  toBase64?: (this: Uint8Array) => string;
}
interface NativeFromBase64 {
  fromBase64?: (text: string, options: { lastChunkHandling: "strict" }) => Uint8Array;
}

const nativeToBase64 = (Uint8Array.prototype as NativeBase64).toBase64;
const nativeFromBase64 = (Uint8Array as unknown as NativeFromBase64).fromBase64;

/**
 * Encode bytes as standard padded base64.
 *
 * @example
 * ```ts
 * import { encodeBase64 } from "./base64.ts";
 * encodeBase64(new TextEncoder().encode("hi")); // "aGk="
 * ```
 */
export function encodeBase64(bytes: Uint8Array): string {
  if (nativeToBase64) return nativeToBase64.call(bytes);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString("base64");
}

/** Thrown by {@linkcode decodeBase64} for text that is not canonical padded base64. */
export class InvalidBase64Error extends Error {
  /** Describe the bad input by its length and a short prefix. */
  constructor(text: string) {
    const preview = text.length > 24 ? `${text.slice(0, 24)}...` : text;
    super(
      `invalid base64 (${text.length} characters): ${JSON.stringify(preview)}`,
    );
    this.name = "InvalidBase64Error";
  }
}

/**
 * Decode standard padded base64, rejecting anything else: missing padding,
 * whitespace, the URL-safe alphabet, and non-zero bits in the last
 * character before the padding.
 *
 * @throws {InvalidBase64Error} when the text is not valid padded base64
 */
export function decodeBase64(text: string): Uint8Array {
  if (!nativeFromBase64) return decodeBase64ByBuffer(text);
  if (text.length % 4 !== 0) throw new InvalidBase64Error(text);
  // "strict" refuses missing padding and non-zero trailing bits.
  let bytes: Uint8Array;
  try {
    bytes = nativeFromBase64(text, { lastChunkHandling: "strict" });
  } catch {
    throw new InvalidBase64Error(text);
  }
  // The native decoder skips ASCII whitespace; text with any decodes to
  // fewer bytes than its length promises. (Checking the length costs
  // nothing; scanning a 700 KB piece for whitespace took ~10% of a
  // download's client time.)
  if (bytes.byteLength !== decodedLength(text)) throw new InvalidBase64Error(text);
  return bytes;
}

/** The bytes that padded base64 of this length (a multiple of 4) stands for. */
function decodedLength(text: string): number {
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return (text.length / 4) * 3 - pad;
}

/**
 * {@linkcode decodeBase64} where the runtime has no `Uint8Array.fromBase64`
 * (Node 22), with `Buffer`. Exported for its tests.
 *
 * @throws {InvalidBase64Error} when the text is not valid padded base64
 */
export function decodeBase64ByBuffer(text: string): Uint8Array {
  if (text.length % 4 !== 0) throw new InvalidBase64Error(text);
  // Buffer's decoder is lenient (it skips what is not base64, and takes the
  // URL-safe alphabet too): the text is accepted only if it is exactly the
  // encoding of what was decoded. Two native passes; the regular expression
  // that checked it before took ~30 ms per 4 MiB (the most of an upload's
  // server time under Node).
  const buf = Buffer.from(text, "base64");
  if (buf.toString("base64") !== text) throw new InvalidBase64Error(text);
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/**
 * A base64 field held as its bytes: `dataBase64` of an `fs/readFile`
 * answer or an `fs/writeFile` request, encoded only when the transport
 * writes it, or not at all when it travels as a binary frame's payload
 * (`binaryFrame`; see docs/protocol.md). The stdio writer encodes it piece
 * by piece into its reused write blocks: a 64 MiB file's answer then never
 * exists as one 85 MB string, nor as 85 MB of fresh blocks, whose
 * allocation cost more than the encoding (see docs/performance.md).
 * `String(part)` is its text, so a transport that joins the parts of a
 * frame needs nothing special.
 *
 * @example
 * ```ts
 * import { Base64Part } from "./base64.ts";
 * String(new Base64Part(new TextEncoder().encode("hi"))); // "aGk="
 * ```
 */
export class Base64Part {
  /** What the part encodes; the transport reads them when it writes. */
  readonly bytes: Uint8Array;
  /**
   * Whether the message carrying it may be sent as a binary frame, with
   * these bytes as its payload, where the connection can carry one. Set
   * only when the receiver asked for (or announced) binary frames.
   */
  readonly binaryFrame: boolean;

  /** A part for `bytes`, which must not change until the frame is sent. */
  constructor(bytes: Uint8Array, opts: { binaryFrame?: boolean } = {}) {
    this.bytes = bytes;
    this.binaryFrame = opts.binaryFrame ?? false;
  }

  /** The length of its text. */
  get textLength(): number {
    return Math.ceil(this.bytes.byteLength / 3) * 4;
  }

  /** Its text: the base64 of the bytes. */
  toString(): string {
    return encodeBase64(this.bytes);
  }

  /** In `JSON.stringify` (logs, other serializers), its text as a string. */
  toJSON(): string {
    return this.toString();
  }
}

/**
 * The bytes of a base64 field as received: a {@linkcode Base64Part} (the
 * payload of a binary frame) as it is, a string decoded.
 *
 * @throws {InvalidBase64Error} when a string is not valid padded base64
 *
 * @example
 * ```ts
 * import { base64FieldBytes } from "./base64.ts";
 * base64FieldBytes("aGk="); // Uint8Array [104, 105]
 * ```
 */
export function base64FieldBytes(field: string | Base64Part): Uint8Array {
  return field instanceof Base64Part ? field.bytes : decodeBase64(field);
}
