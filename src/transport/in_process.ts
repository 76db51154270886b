/**
 * Two connected {@linkcode FrameConnection}s in memory: the same protocol
 * and semantics as stdio or a websocket, without a process or a socket in
 * between (the server side lives in server/in_process.ts).
 *
 * @module
 */
import {
  type FrameConnection,
  frameText,
  type IncomingFrame,
  type OutgoingFrame,
} from "../rpc/connection.ts";
import { AsyncQueue } from "../util/async_queue.ts";
import { WaterMarks } from "../util/water_marks.ts";

/** Options of {@linkcode createConnectionPair}. */
export interface ConnectionPairOptions {
  /** Queued bytes (per direction) above which `send` returns false (default 8 MiB). */
  highWaterBytes?: number;
  /** `onDrain` listeners run once the queue is at or below this (default a quarter). */
  lowWaterBytes?: number;
}

class Channel {
  readonly queue: AsyncQueue<string> = new AsyncQueue();
  bytes = 0;
  // The sender's backpressure: it fills `queue`, the reader drains it.
  readonly marks: WaterMarks;

  constructor(opts: ConnectionPairOptions) {
    this.marks = new WaterMarks(opts);
  }
}

class MemoryConnection implements FrameConnection {
  #incoming: Channel;
  #outgoing: Channel;

  constructor(incoming: Channel, outgoing: Channel) {
    this.#incoming = incoming;
    this.#outgoing = outgoing;
  }

  async *frames(): AsyncIterable<IncomingFrame> {
    const ch = this.#incoming;
    for await (const text of ch.queue) {
      ch.bytes -= text.length;
      ch.marks.shrank(ch.bytes);
      yield { kind: "text", text };
    }
  }

  send(frame: OutgoingFrame): boolean {
    const text = frameText(frame);
    const ch = this.#outgoing;
    if (ch.queue.ended) return false;
    ch.queue.push(text);
    ch.bytes += text.length;
    return ch.marks.grew(ch.bytes);
  }

  onDrain(listener: () => void): void {
    this.#outgoing.marks.onDrain(listener);
  }

  close(): Promise<void> {
    // What was sent stays readable: the other side sees it, then the end.
    this.#outgoing.queue.end();
    return Promise.resolve();
  }
}

/**
 * Two ends of an in-memory connection: what one sends, the other's
 * `frames()` yields, in order. Closing one end ends the other's frames
 * after everything already sent.
 *
 * @example
 * ```ts
 * import { createConnectionPair } from "./in_process.ts";
 * const [a, b] = createConnectionPair();
 * a.send('{"method":"initialized"}');
 * await a.close();
 * for await (const frame of b.frames()) console.log(frame); // { kind: "text", ... }
 * ```
 */
export function createConnectionPair(
  opts: ConnectionPairOptions = {},
): [FrameConnection, FrameConnection] {
  const ab = new Channel(opts);
  const ba = new Channel(opts);
  return [new MemoryConnection(ba, ab), new MemoryConnection(ab, ba)];
}
