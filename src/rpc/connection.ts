/**
 * The contract between a transport (stdio, websocket, in-process) and the
 * JSON-RPC layers above it: whole message frames in, whole frames out, with
 * backpressure on the way out.
 *
 * @module
 */

/** One received frame, or a frame the transport refused. */
export type IncomingFrame =
  | { kind: "text"; text: string }
  | { kind: "tooLarge"; bytes: number; limit: number }
  | { kind: "badUtf8"; bytes: number };

/**
 * One outgoing message: its text, or its text in parts to be sent one
 * after the other as one message (a big answer whose base64 is not joined
 * into one string first; see `stringifyMessage`).
 */
export type OutgoingFrame = string | readonly string[];

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
