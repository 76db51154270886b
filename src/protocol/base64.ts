/**
 * Strict standard base64 (with padding) on top of the runtime's native
 * `Buffer`, which is fast in both Deno and Node but too lenient on input.
 *
 * @module
 */
import { Buffer } from "node:buffer";

// The last character before padding may not carry set bits that decode to
// nothing, so every byte string has exactly one accepted encoding.
const BASE64_RE = /^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$/;

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
  if (text.length % 4 !== 0 || !BASE64_RE.test(text)) {
    throw new InvalidBase64Error(text);
  }
  const buf = Buffer.from(text, "base64");
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}
