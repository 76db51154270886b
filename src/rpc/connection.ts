/**
 * The contract between a transport (stdio, websocket, in-process) and the
 * JSON-RPC layers above it: whole message frames in, whole frames out, with
 * backpressure on the way out.
 *
 * @module
 */
import { Base64Part } from "../protocol/base64.ts";
import { BinaryFrame } from "./binary_frame.ts";

// Lives in the protocol layer, whose validators accept it; exported here too,
// where the transports that encode it have always found it.
export { Base64Part };
export { BinaryFrame };

/** One received frame, or a frame the transport refused. */
export type IncomingFrame =
  | {
    kind: "text";
    text: string;
    /** **[ext]** A binary frame's payload, and the field it fills. */
    payload?: { field: string; bytes: Uint8Array };
  }
  | { kind: "tooLarge"; bytes: number; limit: number }
  | { kind: "badUtf8"; bytes: number };

/** A part of an outgoing frame: text, or bytes to be sent as base64. */
export type FramePart = string | Base64Part;

/**
 * One outgoing message: its text, or its text in parts to be sent one
 * after the other as one message (a big answer whose base64 is not joined
 * into one string first; see `stringifyMessage`).
 */
export type OutgoingFrame = string | readonly FramePart[] | BinaryFrame;

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
  if (typeof frame === "string") return frame;
  if (frame instanceof BinaryFrame) {
    // Peers make binary frames only for connections that say they carry them.
    throw new TypeError(
      `this connection cannot send a binary frame (${frame.bytes.byteLength} bytes)`,
    );
  }
  return frame.join("");
}

/** A bidirectional, message-framed connection. */
export interface FrameConnection {
  /** Received frames, in order; ends when the other side goes away. */
  frames(): AsyncIterable<IncomingFrame>;
  /**
   * Queue one frame. Returns false once the queue is above its high-water
   * mark: the caller should stop producing until `onDrain` fires. A
   * **[ext]** binary frame's payload has been copied when this returns
   * (the caller may free it).
   */
  send(frame: OutgoingFrame): boolean;
  /** Register a listener called whenever the queue falls back below its low-water mark. */
  onDrain(listener: () => void): void;
  /** Flush what is queued, then close. */
  close(): Promise<void>;
  /**
   * **[ext]** Whether it sends and receives binary frames
   * ({@linkcode BinaryFrame}); peers send none where this is not true.
   */
  readonly binaryFrames?: boolean;
}
