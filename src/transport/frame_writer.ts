/**
 * An output queue for newline-framed messages: frames sent in the same turn
 * are written in one batch, and the queued size drives backpressure.
 *
 * @module
 */

/** Options of {@linkcode FrameWriter}. */
export interface FrameWriterOptions {
  /** Above this many queued bytes, `send` returns false. */
  highWaterBytes?: number;
  /** `onDrain` listeners run once the queue is at or below this. */
  lowWaterBytes?: number;
}

/** Queues text frames and writes them as `\n`-terminated UTF-8 batches. */
export class FrameWriter {
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #queue: string[] = [];
  #queuedBytes = 0;
  #inFlightBytes = 0;
  #scheduled = false;
  #writing = false;
  #high: number;
  #low: number;
  #congested = false;
  #drainListeners: (() => void)[] = [];
  #idle: (() => void)[] = [];
  #failed: unknown;
  #encoder = new TextEncoder();

  /** Write to `writable`, which this writer locks. */
  constructor(writable: WritableStream<Uint8Array>, opts: FrameWriterOptions = {}) {
    this.#writer = writable.getWriter();
    this.#high = opts.highWaterBytes ?? 8 * 1024 * 1024;
    this.#low = opts.lowWaterBytes ?? Math.floor(this.#high / 4);
  }

  /** Bytes queued or being written (UTF-16 units, close to bytes for JSON). */
  get bufferedBytes(): number {
    return this.#queuedBytes + this.#inFlightBytes;
  }

  /** Queue a frame; false when the queue is above its high-water mark. */
  send(text: string): boolean {
    if (this.#failed !== undefined) return false;
    this.#queue.push(text);
    this.#queuedBytes += text.length + 1;
    if (!this.#scheduled && !this.#writing) {
      this.#scheduled = true;
      queueMicrotask(() => this.#pump());
    }
    if (this.bufferedBytes > this.#high) this.#congested = true;
    return !this.#congested;
  }

  /** Call `listener` each time a congested queue drains. */
  onDrain(listener: () => void): void {
    this.#drainListeners.push(listener);
  }

  /** Resolves once everything queued so far has been written. */
  flushed(): Promise<void> {
    if (!this.#writing && !this.#scheduled && this.#queue.length === 0) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Flush, then close the underlying stream. */
  async close(): Promise<void> {
    await this.flushed();
    try {
      await this.#writer.close();
    } catch {
      // The other side is already gone.
    }
  }

  async #pump(): Promise<void> {
    this.#scheduled = false;
    this.#writing = true;
    while (this.#queue.length > 0 && this.#failed === undefined) {
      const batch = this.#queue;
      this.#queue = [];
      this.#inFlightBytes = this.#queuedBytes;
      this.#queuedBytes = 0;
      batch.push("");
      const bytes = this.#encoder.encode(batch.join("\n"));
      try {
        await this.#writer.write(bytes);
      } catch (err) {
        this.#failed = err;
      }
      this.#inFlightBytes = 0;
      if (this.#congested && this.bufferedBytes <= this.#low) {
        this.#congested = false;
        for (const l of this.#drainListeners) l();
      }
    }
    if (this.#failed !== undefined) {
      this.#queue = [];
      this.#queuedBytes = 0;
    }
    this.#writing = false;
    const idle = this.#idle;
    this.#idle = [];
    for (const r of idle) r();
  }
}
