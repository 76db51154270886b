/**
 * When a process's merged output is sent. Output read in one turn of the
 * event loop is flushed at the end of that turn (`setImmediate` runs after
 * the reads that were ready, before any timer), so an echo waits for no
 * clock. But a PTY is read ~4 KiB at a time, and a streaming process then
 * cost one notification per read or two: while a process streams, its
 * reads wait {@linkcode BUSY_MERGE_MS} to be merged (up to the merge
 * buffer's size, which flushes itself). Measured on the binary, 64 MiB
 * through a PTY: the client's CPU time per run 450 → 240 ms, the server's
 * 1.2 → 0.95 s (docs/performance.md).
 *
 * @module
 */

/**
 * A process streams when its output follows a flush of at least
 * {@linkcode BUSY_MIN_BYTES} within this many milliseconds.
 */
export const BUSY_MERGE_MS = 1;

/** See {@linkcode BUSY_MERGE_MS}: smaller flushes never make a process busy. */
export const BUSY_MIN_BYTES = 1024;

/** The clock and scheduling the pacer uses (injectable for tests). */
export interface PacerClock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Run `fn` after the reads of this turn of the event loop. */
  soon(fn: () => void): void;
  /** Run `fn` after `ms`; returns what {@linkcode PacerClock.cancel} takes. */
  later(fn: () => void, ms: number): unknown;
  /** Cancel a {@linkcode PacerClock.later}. */
  cancel(handle: unknown): void;
}

/** The event loop's own clock. */
export const EVENT_LOOP_CLOCK: PacerClock = {
  now: () => performance.now(),
  soon: (fn) => setImmediate(fn),
  later: (fn, ms) => setTimeout(fn, ms),
  cancel: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Schedules the flushes of many items (processes; objects, since what it
 * remembers of each is weakly held): `flush(item)` is called once per
 * schedule, and the caller reports each flush it made, scheduled or not,
 * with {@linkcode OutputPacer.flushed}.
 *
 * @example
 * ```ts
 * import { OutputPacer } from "./output_pacer.ts";
 * const process = { id: "p1" };
 * const pacer = new OutputPacer<{ id: string }>((p) => {
 *   pacer.flushed(p, 5); // the caller sent 5 bytes of p's output
 * });
 * pacer.merged(process); // flushed at the end of this turn
 * ```
 */
export class OutputPacer<T extends object> {
  #flush: (item: T) => void;
  #clock: PacerClock;
  /** Items to flush at the end of this turn. */
  #soon = new Set<T>();
  #soonScheduled = false;
  /** Streaming items, to flush when the timer fires. */
  #busy = new Set<T>();
  #busyTimer: unknown;
  /** The time and size of each item's last flush. */
  #last = new WeakMap<T, { ms: number; bytes: number }>();

  /** @param flush sends an item's merged output @param clock for tests */
  constructor(flush: (item: T) => void, clock: PacerClock = EVENT_LOOP_CLOCK) {
    this.#flush = flush;
    this.#clock = clock;
  }

  /** Output of `item` was merged: schedule its flush, unless one is scheduled. */
  merged(item: T): void {
    if (this.#busy.has(item) || this.#soon.has(item)) return;
    const last = this.#last.get(item);
    if (last && last.bytes >= BUSY_MIN_BYTES && this.#clock.now() - last.ms < BUSY_MERGE_MS) {
      this.#busy.add(item);
      this.#busyTimer ??= this.#clock.later(() => this.#flushBusy(), BUSY_MERGE_MS);
      return;
    }
    this.#flushSoon(item);
  }

  /**
   * Input was written to `item`: what it prints next (an echo, a prompt)
   * goes out in the turn it is read, even while it streams.
   */
  input(item: T): void {
    // What it streamed before the write goes now, and is not the last
    // flush that the answer would otherwise be measured against.
    if (this.#busy.delete(item)) this.#flush(item);
    this.#last.delete(item);
  }

  /** `item`'s output was just flushed, `bytes` of it; nothing is scheduled for it any more. */
  flushed(item: T, bytes: number): void {
    this.#soon.delete(item);
    this.#busy.delete(item);
    this.#last.set(item, { ms: this.#clock.now(), bytes });
  }

  /** Drop every schedule: the caller flushes no more. */
  close(): void {
    this.#soon.clear();
    this.#busy.clear();
    if (this.#busyTimer !== undefined) this.#clock.cancel(this.#busyTimer);
    this.#busyTimer = undefined;
  }

  #flushSoon(item: T): void {
    this.#soon.add(item);
    if (this.#soonScheduled) return;
    this.#soonScheduled = true;
    this.#clock.soon(() => {
      this.#soonScheduled = false;
      const items = [...this.#soon];
      this.#soon.clear();
      for (const i of items) this.#flush(i);
    });
  }

  #flushBusy(): void {
    this.#busyTimer = undefined;
    const items = [...this.#busy];
    this.#busy.clear();
    for (const i of items) this.#flush(i);
  }
}
