/**
 * A {@linkcode FrameConnection} over a websocket: one JSON message per
 * frame. Works with any object shaped like the standard `WebSocket` (Deno's
 * and browsers' sockets, or the `ws` package's), on the server or the
 * client side.
 *
 * @module
 */
import { AsyncQueue } from "../util/async_queue.ts";
import { within } from "../util/deadline.ts";
import { WaterMarks } from "../util/water_marks.ts";
import {
  type FrameConnection,
  frameText,
  type IncomingFrame,
  type OutgoingFrame,
} from "../rpc/connection.ts";
import { sendCopiesBytes, type WebSocketLike } from "../runtime/websocket_types.ts";
import { BinaryFrame, decodeBinaryFrame, encodeBinaryFrame } from "../rpc/binary_frame.ts";
import { payloadPool } from "../rpc/payload_pool.ts";

// Declared in the runtime layer, which creates the sockets; re-exported so
// that this module stays the place to import it from.
export type { WebSocketLike };

const CONNECTING = 0;
const OPEN = 1;

/**
 * The largest binary message encoded into the reused send buffer: the
 * client library's pieces (1 MiB up, 512 KiB down) with their headers.
 */
const SEND_BUFFER_MAX = 2 * 1024 * 1024;

/** Options of {@linkcode WebSocketConnection}. */
export interface WebSocketConnectionOptions {
  /** The largest accepted incoming frame, in bytes (default 128 MiB). */
  maxMessageBytes?: number;
  /** Above this many buffered outgoing bytes, `send` returns false (default 8 MiB). */
  highWaterBytes?: number;
  /** `onDrain` listeners run once the buffer is at or below this (default a quarter of the high-water mark). */
  lowWaterBytes?: number;
  /**
   * How often the socket's `bufferedAmount` is checked while congested or
   * flushing, in ms (default 10): the standard interface has no drain event.
   */
  drainPollMs?: number;
  /** How long `close()` waits for queued frames and the closing handshake, in ms (default 5000). */
  closeTimeoutMs?: number;
  /**
   * **[ext]** Hand each binary message's buffer to the payload pool
   * (`rpc/payload_pool.ts`), so that a payload in it is freed at once when
   * its consumer gives it back. Only for a receiver whose consumers give
   * back nothing they still hold: the server (default false).
   */
  adoptMessages?: boolean;
}

type Queued = IncomingFrame | Promise<IncomingFrame>;

/**
 * Frames of a websocket as a {@linkcode FrameConnection}. Text frames are
 * messages; binary frames hold UTF-8 JSON, or **[ext]** a binary frame of
 * the protocol (`#<n> <field> <json>\n` and the payload). A frame over
 * `maxMessageBytes` becomes a `tooLarge` frame (the session answers it with
 * an error and the connection lives on). `frames()` ends when the socket
 * closes or fails.
 *
 * @example
 * ```ts
 * import { WebSocketConnection } from "./websocket.ts";
 * const socket = new WebSocket("ws://127.0.0.1:8080", {
 *   headers: { Authorization: "Bearer secret" },
 * });
 * const conn = new WebSocketConnection(socket);
 * conn.send(JSON.stringify({ id: 1, method: "initialize", params: { clientName: "me" } }));
 * for await (const frame of conn.frames()) console.log(frame);
 * ```
 */
export class WebSocketConnection implements FrameConnection {
  #socket: WebSocketLike;
  #maxMessageBytes: number;
  #marks: WaterMarks;
  #pollMs: number;
  #closeTimeoutMs: number;
  #queue: AsyncQueue<Queued> = new AsyncQueue();
  #ended = false;
  #iterating = false;
  #beforeOpen: (string | Uint8Array)[] = [];
  #beforeOpenBytes = 0;
  #pollTimer: ReturnType<typeof setInterval> | undefined;
  #closedListeners: (() => void)[] = [];
  #decoder = new TextDecoder("utf-8", { fatal: true });
  /** Whether `send` copies its bytes, so that binary frames may be encoded into one buffer. */
  #reuseSends: boolean;
  #adoptMessages: boolean;
  #sendBuffer: Uint8Array | undefined;
  /** The reused send buffer, grown to `bytes` (messages over {@linkcode SEND_BUFFER_MAX} get their own). */
  #room = (bytes: number): Uint8Array | undefined => {
    if (bytes > SEND_BUFFER_MAX) return undefined;
    if (!this.#sendBuffer || this.#sendBuffer.byteLength < bytes) {
      this.#sendBuffer = new Uint8Array(bytes);
    }
    return this.#sendBuffer;
  };
  /** **[ext]** Binary frames pass, each as one binary message. */
  readonly binaryFrames = true;

  /** Wrap `socket`, which may still be connecting. */
  constructor(socket: WebSocketLike, opts: WebSocketConnectionOptions = {}) {
    this.#socket = socket;
    this.#reuseSends = sendCopiesBytes(socket);
    this.#adoptMessages = opts.adoptMessages ?? false;
    this.#maxMessageBytes = opts.maxMessageBytes ?? 128 * 1024 * 1024;
    this.#marks = new WaterMarks(opts);
    // Registered first, so polling stops before any other drain listener
    // runs: one that sends enough to congest again starts a new poll.
    this.#marks.onDrain(() => this.#stopPolling());
    this.#pollMs = opts.drainPollMs ?? 10;
    this.#closeTimeoutMs = opts.closeTimeoutMs ?? 5000;
    socket.binaryType = "arraybuffer";
    socket.addEventListener("open", () => this.#flushBeforeOpen());
    socket.addEventListener("message", (ev) => this.#onMessage(ev.data));
    socket.addEventListener("close", () => this.#end());
    // A failed socket is unusable even if its close event never comes.
    socket.addEventListener("error", () => this.#end());
    if (socket.readyState > OPEN) this.#end();
  }

  /** Bytes sent but not yet written to the network. */
  get bufferedBytes(): number {
    return this.#socket.bufferedAmount + this.#beforeOpenBytes;
  }

  /** The received frames, in order; ends when the socket closes. */
  async *frames(): AsyncIterable<IncomingFrame> {
    if (this.#iterating) throw new Error("WebSocketConnection.frames() can be iterated only once");
    this.#iterating = true;
    for await (const item of this.#queue) yield await item;
  }

  /**
   * Send one frame (text, or **[ext]** a binary frame). Returns false while the socket's buffer is above
   * the high-water mark; frames sent after the socket closed are dropped.
   */
  send(frame: OutgoingFrame): boolean {
    const state = this.#socket.readyState;
    const data = frame instanceof BinaryFrame
      // Once open, a socket that copies what it sends can be given the same
      // buffer again: one block of garbage less per message.
      ? encodeBinaryFrame(frame, state === OPEN && this.#reuseSends ? this.#room : undefined)
      : frameText(frame);
    if (state === CONNECTING) {
      this.#beforeOpen.push(data);
      this.#beforeOpenBytes += data.length;
    } else if (state === OPEN) {
      try {
        this.#socket.send(data);
      } catch {
        // The socket failed between the state check and the send; its close
        // event ends the connection.
      }
    } else {
      return true;
    }
    // The standard interface has no drain event: poll while congested.
    if (!this.#marks.congested && !this.#marks.grew(this.bufferedBytes)) {
      this.#pollTimer = setInterval(() => this.#checkDrain(), this.#pollMs);
    }
    return !this.#marks.congested;
  }

  /** Call `listener` each time a congested socket's buffer drains. */
  onDrain(listener: () => void): void {
    this.#marks.onDrain(listener);
  }

  /**
   * Wait (up to `closeTimeoutMs`) for buffered frames to be written, then
   * close the socket with code 1000 and wait for the closing handshake.
   */
  async close(): Promise<void> {
    const deadline = Date.now() + this.#closeTimeoutMs;
    const socket = this.#socket;
    while (
      socket.readyState === OPEN && this.bufferedBytes > 0 && Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, this.#pollMs));
    }
    if (socket.readyState <= OPEN) {
      try {
        socket.close(1000, "closing");
      } catch {
        // Already failed; the close event follows.
      }
    }
    if (!this.#ended) {
      await within(
        new Promise<void>((resolve) => this.#closedListeners.push(resolve)),
        Math.max(0, deadline - Date.now()),
      );
    }
  }

  #flushBeforeOpen(): void {
    const pending = this.#beforeOpen;
    this.#beforeOpen = [];
    this.#beforeOpenBytes = 0;
    for (const data of pending) {
      try {
        this.#socket.send(data);
      } catch {
        break;
      }
    }
  }

  #checkDrain(): void {
    if (this.#ended) return;
    this.#marks.shrank(this.bufferedBytes);
  }

  #stopPolling(): void {
    if (this.#pollTimer !== undefined) clearInterval(this.#pollTimer);
    this.#pollTimer = undefined;
  }

  #onMessage(data: unknown): void {
    if (this.#ended) return;
    if (typeof data === "string") {
      this.#push(this.#textFrame(data));
    } else if (data instanceof ArrayBuffer) {
      // The message's own buffer (binaryType "arraybuffer"): whatever
      // payload it carries is freed at once when given back.
      if (this.#adoptMessages) payloadPool.adopt(data);
      this.#push(this.#binaryFrame(new Uint8Array(data)));
    } else if (ArrayBuffer.isView(data)) {
      this.#push(
        this.#binaryFrame(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)),
      );
    } else if (typeof Blob !== "undefined" && data instanceof Blob) {
      // A socket whose binaryType could not be changed: decode in order.
      this.#push(data.arrayBuffer().then((buf) => this.#binaryFrame(new Uint8Array(buf))));
    } else {
      this.#push({ kind: "badUtf8", bytes: 0 });
    }
  }

  #textFrame(text: string): IncomingFrame {
    // Three UTF-8 bytes per UTF-16 unit at most: count only near the limit.
    if (text.length * 3 > this.#maxMessageBytes) {
      const bytes = utf8Length(text);
      if (bytes > this.#maxMessageBytes) {
        return { kind: "tooLarge", bytes, limit: this.#maxMessageBytes };
      }
    }
    return { kind: "text", text };
  }

  #binaryFrame(bytes: Uint8Array): IncomingFrame {
    if (bytes.byteLength > this.#maxMessageBytes) {
      return { kind: "tooLarge", bytes: bytes.byteLength, limit: this.#maxMessageBytes };
    }
    const binary = decodeBinaryFrame(bytes);
    if (binary) {
      const { header, bytes: payload } = binary;
      return { kind: "text", text: header.text, payload: { field: header.field, bytes: payload } };
    }
    try {
      return { kind: "text", text: this.#decoder.decode(bytes) };
    } catch {
      return { kind: "badUtf8", bytes: bytes.byteLength };
    }
  }

  #push(item: Queued): void {
    this.#queue.push(item);
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stopPolling();
    this.#beforeOpen = [];
    this.#beforeOpenBytes = 0;
    this.#queue.end();
    const listeners = this.#closedListeners;
    this.#closedListeners = [];
    for (const listener of listeners) listener();
  }
}

/** The UTF-8 length of a string, without encoding it. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    } else bytes += 3;
  }
  return bytes;
}
