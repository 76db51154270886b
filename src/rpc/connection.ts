/**
 * The contract between a transport (stdio, websocket, in-process) and the
 * JSON-RPC layers above it: whole message frames in, whole frames out, with
 * backpressure on the way out.
 *
 * @module
 */
import { encodeBase64 } from "../protocol/base64.ts";

/** One received frame, or a frame the transport refused. */
export type IncomingFrame =
  | { kind: "text"; text: string }
  | { kind: "tooLarge"; bytes: number; limit: number }
  | { kind: "badUtf8"; bytes: number };

/**
 * A part of an outgoing frame that stands for the standard base64 of
 * `bytes`, encoded only when the transport writes it. The stdio writer
 * encodes it piece by piece into its reused write blocks: a 64 MiB file's
 * answer then never exists as one 85 MB string, nor as 85 MB of fresh
 * blocks, whose allocation cost more than the encoding (see
 * docs/performance.md). `String(part)` is its text, so a transport that
 * joins the parts of a frame needs nothing special.
 *
 * @example
 * ```ts
 * import { Base64Part } from "./connection.ts";
 * String(new Base64Part(new TextEncoder().encode("hi"))); // "aGk="
 * ```
 */
export class Base64Part {
  /** What the part encodes; the transport reads them when it writes. */
  readonly bytes: Uint8Array;

  /** A part for `bytes`, which must not change until the frame is sent. */
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
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

/** A part of an outgoing frame: text, or bytes to be sent as base64. */
export type FramePart = string | Base64Part;

/**
 * One outgoing message: its text, or its text in parts to be sent one
 * after the other as one message (a big answer whose base64 is not joined
 * into one string first; see `stringifyMessage`).
 */
export type OutgoingFrame = string | readonly FramePart[];

/**
 * The whole text of an outgoing frame.
 *
 * @example
 * ```ts
 * import { frameText } from "./connection.ts";
 * frameText(['{"id":1,"result":{"data":"', "aGk=", '"}}']); // '{"id":1,"result":{"data":"aGk="}}'
 * ```
 */
export function frameText(frame: OutgoingFrame): string {
  return typeof frame === "string" ? frame : frame.join("");
}

/** A bidirectional, message-framed connection. */
export interface FrameConnection {
  /** Received frames, in order; ends when the other side goes away. */
  frames(): AsyncIterable<IncomingFrame>;
  /**
   * Queue one frame. Returns false once the queue is above its high-water
   * mark: the caller should stop producing until `onDrain` fires.
   */
  send(frame: OutgoingFrame): boolean;
  /** Register a listener called whenever the queue falls back below its low-water mark. */
  onDrain(listener: () => void): void;
  /** Flush what is queued, then close. */
  close(): Promise<void>;
}
