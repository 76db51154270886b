/**
 * Two connected {@linkcode FrameConnection}s in memory: the same protocol
 * and semantics as stdio or a websocket, without a process or a socket in
 * between (the server side lives in server/in_process.ts).
 *
 * @module
 */
import type { FrameConnection, IncomingFrame } from "../rpc/connection.ts";
import { WaterMarks } from "../util/water_marks.ts";

/** Options of {@linkcode createConnectionPair}. */
export interface ConnectionPairOptions {
  /** Queued bytes (per direction) above which `send` returns false (default 8 MiB). */
  highWaterBytes?: number;
  /** `onDrain` listeners run once the queue is at or below this (default a quarter). */
  lowWaterBytes?: number;
}

class Channel {
  queue: string[] = [];
  head = 0;
  bytes = 0;
  ended = false;
  waiter: (() => void) | undefined;
  // The sender's backpressure: it fills `queue`, the reader drains it.
  readonly marks: WaterMarks;

  constructor(opts: ConnectionPairOptions) {
    this.marks = new WaterMarks(opts);
  }

  wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
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
    while (true) {
      if (ch.head < ch.queue.length) {
        const text = ch.queue[ch.head];
        ch.queue[ch.head++] = "";
        ch.bytes -= text.length;
        if (ch.head === ch.queue.length) {
          ch.queue = [];
          ch.head = 0;
        }
        ch.marks.shrank(ch.bytes);
        yield { kind: "text", text };
        continue;
      }
      if (ch.ended) return;
      await new Promise<void>((resolve) => ch.waiter = resolve);
    }
  }

  send(text: string): boolean {
    const ch = this.#outgoing;
    if (ch.ended) return false;
    ch.queue.push(text);
    ch.bytes += text.length;
    ch.wake();
    return ch.marks.grew(ch.bytes);
  }

  onDrain(listener: () => void): void {
    this.#outgoing.marks.onDrain(listener);
  }

  close(): Promise<void> {
    // What was sent stays readable: the other side sees it, then the end.
    this.#outgoing.ended = true;
    this.#outgoing.wake();
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
