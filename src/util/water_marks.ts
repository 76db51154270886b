/**
 * Backpressure by high and low water marks, shared by every outgoing queue
 * (websocket, stdio frames, in-memory pairs) so that they pause and resume
 * producers by the same rule: above the high mark the producer is told to
 * pause; once the queue is back at or below the low mark the drain
 * listeners run. The gap between the marks keeps a queue hovering around
 * one mark from waking its producers on every frame.
 *
 * @module
 */

/** Options of {@linkcode WaterMarks}. */
export interface WaterMarkOptions {
  /** Above this many queued bytes the queue is congested (default 8 MiB). */
  highWaterBytes?: number;
  /** A congested queue drains at or below this (default a quarter of the high mark). */
  lowWaterBytes?: number;
}

/**
 * The congestion state of one queue. The queue reports its size after it
 * grew ({@linkcode WaterMarks.grew}) and after it shrank
 * ({@linkcode WaterMarks.shrank}); the marks decide when the producer must
 * pause and when the drain listeners run.
 *
 * @example
 * ```ts
 * import { WaterMarks } from "./water_marks.ts";
 * const marks = new WaterMarks({ highWaterBytes: 1000 });
 * marks.onDrain(() => console.log("resume"));
 * marks.grew(1500); // false: pause
 * marks.shrank(600); // still congested: 600 > 250
 * marks.shrank(250); // logs "resume"
 * ```
 */
export class WaterMarks {
  /** The high mark, in bytes. */
  readonly high: number;
  /** The low mark, in bytes. */
  readonly low: number;
  #congested = false;
  #drainListeners: (() => void)[] = [];

  /** Marks from `opts`, with the defaults for what is missing. */
  constructor(opts: WaterMarkOptions = {}) {
    this.high = opts.highWaterBytes ?? 8 * 1024 * 1024;
    this.low = opts.lowWaterBytes ?? Math.floor(this.high / 4);
  }

  /** True from crossing the high mark until the queue drains. */
  get congested(): boolean {
    return this.#congested;
  }

  /**
   * Note the queue's size after it grew. Returns false while congested:
   * the producer should pause until the drain listeners run.
   */
  grew(queuedBytes: number): boolean {
    if (queuedBytes > this.high) this.#congested = true;
    return !this.#congested;
  }

  /**
   * Note the queue's size after it shrank. A congested queue at or below
   * the low mark is congested no more, and the drain listeners run (in the
   * order they were added) before this returns true.
   */
  shrank(queuedBytes: number): boolean {
    if (!this.#congested || queuedBytes > this.low) return false;
    this.#congested = false;
    for (const listener of this.#drainListeners) listener();
    return true;
  }

  /** Call `listener` each time a congested queue drains. */
  onDrain(listener: () => void): void {
    this.#drainListeners.push(listener);
  }
}
