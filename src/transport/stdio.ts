/**
 * Newline-delimited JSON over a pair of byte streams: the server's stdin and
 * stdout, or a child server's pipes as seen by the client.
 *
 * @module
 */
import type { FrameConnection, IncomingFrame, OutgoingFrame } from "../rpc/connection.ts";
import { LineSplitter } from "../rpc/line_splitter.ts";
import { FrameWriter } from "./frame_writer.ts";

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
  #readable: ReadableStream<Uint8Array>;
  #writer: FrameWriter;
  #maxMessageBytes: number;
  /** **[ext]** Binary frames pass: a header line, then the raw payload. */
  readonly binaryFrames = true;

  /** Wrap the two streams; the writable is locked by this connection. */
  constructor(
    readable: ReadableStream<Uint8Array>,
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

  /** The lines read from the readable, as frames. */
  async *frames(): AsyncIterable<IncomingFrame> {
    // A stream's chunks belong to its reader: the splitter may keep them.
    const splitter = new LineSplitter(this.#maxMessageBytes, { keepChunks: true });
    const reader = this.#readable.getReader();
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

  send(frame: OutgoingFrame): boolean {
    return this.#writer.send(frame);
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

function toFrame(
  ev: ReturnType<LineSplitter["push"]>[number],
): IncomingFrame {
  if (ev.kind !== "line") return ev;
  return ev.payload
    ? { kind: "text", text: ev.text, payload: ev.payload }
    : { kind: "text", text: ev.text };
}
