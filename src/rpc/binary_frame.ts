/**
 * **[ext]** Binary frames: a JSON-RPC message whose one base64 field
 * travels as raw bytes after it instead of as base64 inside it, so bulk
 * file contents skip base64, JSON escaping scans and UTF-8 decoding on both
 * sides. On the wire (docs/protocol.md, "Binary frames"):
 *
 * ```text
 * #<byteLength> <field> <JSON message without the field>\n<byteLength raw bytes>
 * ```
 *
 * on stdio directly followed by the next message, on a websocket as one
 * binary message. No JSON text starts with `#`, so no v0 message changes
 * meaning; a peer sends one only where the other side asked for it.
 *
 * @module
 */
import { Base64Part } from "../protocol/base64.ts";

/** The first byte of a binary frame's header: `#`. */
export const BINARY_FRAME_MARK = 0x23;

/** An outgoing message with one field's bytes as its payload. */
export class BinaryFrame {
  /** The JSON message, without the field. */
  readonly text: string;
  /** The field whose value the payload is. */
  readonly field: string;
  /** The payload. */
  readonly bytes: Uint8Array;

  /** A frame for `text` whose `field` (of params or result) is `bytes`. */
  constructor(text: string, field: string, bytes: Uint8Array) {
    this.text = text;
    this.field = field;
    this.bytes = bytes;
  }

  /** The header line, newline included: `#<byteLength> <field> <text>\n`. */
  header(): string {
    return `#${this.bytes.byteLength} ${this.field} ${this.text}\n`;
  }
}

/** A parsed header: the message text, and the field and size of its payload. */
export interface BinaryFrameHeader {
  /** The JSON message, without the field. */
  text: string;
  /** The field of params (a request) or result (a response) the payload fills. */
  field: string;
  /** The payload's size. */
  byteLength: number;
}

/** Decodes every header: made once, not for each message. */
const headerDecoder = new TextDecoder("utf-8", { fatal: true });
const headerEncoder = new TextEncoder();

const HEADER = /^#(0|[1-9][0-9]{0,14}) ([A-Za-z_][A-Za-z0-9_]{0,63}) /;

/**
 * The header of a binary frame, from its line without the newline (a `\r`
 * before it is allowed), or undefined when the line is not one.
 *
 * @example
 * ```ts
 * import { parseBinaryFrameHeader } from "./binary_frame.ts";
 * parseBinaryFrameHeader('#3 dataBase64 {"id":1,"result":{}}');
 * // { text: '{"id":1,"result":{}}', field: "dataBase64", byteLength: 3 }
 * ```
 */
export function parseBinaryFrameHeader(line: string): BinaryFrameHeader | undefined {
  const m = HEADER.exec(line);
  if (!m) return undefined;
  return { text: line.slice(m[0].length), field: m[2], byteLength: Number(m[1]) };
}

/**
 * The message of `frame` as one block of bytes, header and payload: a
 * websocket's binary message. `room`, given the size, may offer a buffer
 * to write it into (a view of its start is returned); otherwise, or when
 * it offers none, the block is a new buffer.
 */
export function encodeBinaryFrame(
  frame: BinaryFrame,
  room?: (bytes: number) => Uint8Array | undefined,
): Uint8Array {
  const header = headerEncoder.encode(frame.header());
  const total = header.byteLength + frame.bytes.byteLength;
  const out = room?.(total)?.subarray(0, total) ?? new Uint8Array(total);
  out.set(header);
  out.set(frame.bytes, header.byteLength);
  return out;
}

/**
 * A whole binary frame (a websocket's binary message) split into its header
 * and payload (a view, not a copy), or undefined when it is not one: no
 * header, or a payload of another size than the header says.
 */
export function decodeBinaryFrame(
  message: Uint8Array,
): { header: BinaryFrameHeader; bytes: Uint8Array } | undefined {
  if (message[0] !== BINARY_FRAME_MARK) return undefined;
  const nl = message.indexOf(0x0a);
  if (nl === -1) return undefined;
  let line: string;
  try {
    line = headerDecoder.decode(message.subarray(0, nl));
  } catch {
    return undefined;
  }
  const header = parseBinaryFrameHeader(line);
  if (!header || header.byteLength !== message.byteLength - nl - 1) return undefined;
  return { header, bytes: message.subarray(nl + 1) };
}

/**
 * Put a received payload in its place: `field` of the message's `params`
 * (a request or notification) or `result` (a response), as a
 * {@linkcode Base64Part}. Returns false when the message has no such
 * object, or already has the field (the payload then has no place).
 */
export function placePayload(message: unknown, field: string, bytes: Uint8Array): boolean {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  const key = "method" in m ? "params" : "result";
  const body = m[key];
  if (body === null || typeof body !== "object" || Array.isArray(body)) return false;
  if (Object.hasOwn(body, field)) return false;
  (body as Record<string, unknown>)[field] = new Base64Part(bytes);
  return true;
}
