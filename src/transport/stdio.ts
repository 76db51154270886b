/**
 * Newline-delimited JSON over a pair of byte streams: the server's stdin and
 * stdout, or a child server's pipes as seen by the client.
 *
 * @module
 */
import type { FrameConnection, IncomingFrame, OutgoingFrame } from "../rpc/connection.ts";
import { type LineEvent, LineSplitter } from "../rpc/line_splitter.ts";
import type { FdInput } from "../runtime/fd_reader.ts";
import { FrameWriter } from "./frame_writer.ts";

/** Bytes read at once outside a binary frame's payload. */
const LINE_READ_BYTES = 64 * 1024;

/**
 * Frames read ahead of the consumer before reading pauses (or fewer, once
 * they hold {@linkcode QUEUED_BYTES}): a client that writes faster than the
 * server takes requests is held back by the pipe, not buffered here.
 */
const QUEUED_FRAMES = 16;
const QUEUED_BYTES = 1024 * 1024;

/** Options of {@linkcode StdioConnection}. */
export interface StdioConnectionOptions {
  /** The largest accepted incoming line, in bytes. */
  maxMessageBytes?: number;
  /** Output queue size above which producers are asked to pause. */
  highWaterBytes?: number;
  /** Reuse one write buffer; only where writes resolve once written (`FrameWriterOptions.reuseBuffer`). */
  reuseWriteBuffer?: boolean;
}

/**
 * A {@linkcode FrameConnection} over a readable and a writable byte stream,
 * one JSON message per `\n`-terminated line.
 *
 * @example
 * ```ts
 * import { StdioConnection } from "./stdio.ts";
 * const conn = new StdioConnection(Deno.stdin.readable, Deno.stdout.writable);
 * for await (const frame of conn.frames()) console.error(frame);
 * ```
 */
export class StdioConnection implements FrameConnection {
  #readable: ReadableStream<Uint8Array> | FdInput;
  #writer: FrameWriter;
  #maxMessageBytes: number;
  /** **[ext]** Binary frames pass: a header line, then the raw payload. */
  readonly binaryFrames = true;

  /**
   * Wrap the two streams; the writable is locked by this connection. The
   * input may instead be a descriptor reader (`runtime/fd_reader.ts`),
   * which reads binary frames' payloads into place.
   */
  constructor(
    readable: ReadableStream<Uint8Array> | FdInput,
    writable: WritableStream<Uint8Array>,
    opts: StdioConnectionOptions = {},
  ) {
    this.#readable = readable;
    this.#maxMessageBytes = opts.maxMessageBytes ?? 128 * 1024 * 1024;
    this.#writer = new FrameWriter(writable, {
      highWaterBytes: opts.highWaterBytes,
      reuseBuffer: opts.reuseWriteBuffer,
    });
  }

  /** The lines read from the input, as frames. */
  frames(): AsyncIterable<IncomingFrame> {
    const input = this.#readable;
    return typeof input === "function" ? this.#fdFrames(input) : this.#streamFrames(input);
  }

  async *#streamFrames(readable: ReadableStream<Uint8Array>): AsyncIterable<IncomingFrame> {
    // A stream's chunks belong to its reader: the splitter may keep them.
    const splitter = new LineSplitter(this.#maxMessageBytes, { keepChunks: true });
    const reader = readable.getReader();
    try {
      while (true) {
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await reader.read();
        } catch {
          break;
        }
        if (result.done) break;
        for (const ev of splitter.push(result.value)) yield toFrame(ev);
      }
      for (const ev of splitter.end()) yield toFrame(ev);
    } finally {
      reader.releaseLock();
    }
  }

  async *#fdFrames(input: FdInput): AsyncIterable<IncomingFrame> {
    // Lines are read into one reused buffer (the splitter copies what it
    // keeps); a payload is read straight into its own buffer.
    const splitter = new LineSplitter(this.#maxMessageBytes);
    const lineBuffer = new Uint8Array(LINE_READ_BYTES);
    let target: Uint8Array = lineBuffer;
    const queue: IncomingFrame[] = [];
    let queuedBytes = 0;
    let ended = false;
    let wake: (() => void) | undefined;
    const take = (events: LineEvent[]): void => {
      for (const ev of events) {
        const frame = toFrame(ev);
        queue.push(frame);
        queuedBytes += frameBytes(frame);
      }
      wake?.();
    };
    const reading = input({
      target: () => (target = splitter.payloadRoom() ?? lineBuffer),
      filled: (bytes) => {
        take(
          target === lineBuffer
            ? splitter.push(lineBuffer.subarray(0, bytes))
            : splitter.payloadFilled(bytes),
        );
        return queue.length < QUEUED_FRAMES && queuedBytes < QUEUED_BYTES;
      },
      end: () => {
        ended = true;
        take(splitter.end());
      },
    });
    try {
      while (true) {
        const frame = queue.shift();
        if (frame) {
          queuedBytes -= frameBytes(frame);
          yield frame;
        } else if (ended) {
          break;
        } else {
          const woken = new Promise<void>((resolve) => wake = resolve);
          reading.resume();
          await woken;
          wake = undefined;
        }
      }
    } finally {
      reading.close();
    }
  }

  send(frame: OutgoingFrame): boolean {
    return this.#writer.send(frame);
  }

  /**
   * Queue bytes that are already whole frames in this connection's wire
   * format (a relay's pass-through); false above the high-water mark.
   */
  sendBytes(bytes: Uint8Array): boolean {
    return this.#writer.sendBytes(bytes);
  }

  onDrain(listener: () => void): void {
    this.#writer.onDrain(listener);
  }

  /** Resolves once everything sent so far has been written. */
  flushed(): Promise<void> {
    return this.#writer.flushed();
  }

  close(): Promise<void> {
    return this.#writer.close();
  }
}

/** What a queued frame holds, roughly: its text and payload. */
function frameBytes(frame: IncomingFrame): number {
  return frame.kind === "text" ? frame.text.length + (frame.payload?.bytes.byteLength ?? 0) : 0;
}

function toFrame(ev: LineEvent): IncomingFrame {
  if (ev.kind !== "line") return ev;
  return ev.payload
    ? { kind: "text", text: ev.text, payload: ev.payload }
    : { kind: "text", text: ev.text };
}
