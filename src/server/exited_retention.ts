/**
 * How long exited processes stay readable: each for a time to live, and all
 * of one connection within a count and a byte budget, the oldest exit
 * dropped first. Running processes are bounded elsewhere; keeping exited
 * ones apart means a client that runs one short command after another is
 * never refused for the commands it already finished.
 *
 * @module
 */

/** The bounds of an {@linkcode ExitedRetention}. */
export interface RetentionLimits {
  /** The most exited processes kept. */
  maxCount: number;
  /** The most retained output bytes kept across them. */
  maxBytes: number;
  /** How long each stays, in ms. */
  ttlMs: number;
}

interface Entry {
  bytes: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Exited processes in the order they exited. `onDrop` is called for each
 * one that leaves because its time is up or the bounds are full; the newest
 * is never dropped for the bounds, so a process whose own output exceeds
 * the byte budget can still be read right after its exit.
 *
 * @example
 * ```ts
 * import { ExitedRetention } from "./exited_retention.ts";
 * const kept = new ExitedRetention<string>(
 *   { maxCount: 2, maxBytes: 1024, ttlMs: 30_000 },
 *   (id) => console.log("dropped", id),
 * );
 * kept.add("a", 10);
 * kept.add("b", 10);
 * kept.add("c", 10); // logs "dropped a"
 * kept.clear();
 * ```
 */
export class ExitedRetention<K> {
  #limits: RetentionLimits;
  #onDrop: (key: K) => void;
  /** Insertion order is exit order. */
  #entries = new Map<K, Entry>();
  #bytes = 0;
  /** While held, time does not run out for anyone (the bounds still apply). */
  #held = false;

  /** @param limits the bounds; @param onDrop told of every key that leaves */
  constructor(limits: RetentionLimits, onDrop: (key: K) => void) {
    this.#limits = limits;
    this.#onDrop = onDrop;
  }

  /** How many exited processes are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** Their retained output, in bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Keep `key`, which retains `bytes` of output; drops the oldest beyond the bounds. */
  add(key: K, bytes: number): void {
    this.delete(key);
    this.#entries.set(key, { bytes, timer: this.#held ? undefined : this.#timer(key) });
    this.#bytes += bytes;
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= 1) break;
      if (this.#entries.size <= this.#limits.maxCount && this.#bytes <= this.#limits.maxBytes) {
        break;
      }
      this.#drop(oldest);
    }
  }

  /**
   * Stop the clocks: nobody expires by time until {@linkcode release}. A
   * session without a connection holds them, so that what exited while its
   * client was away is still there when it comes back.
   */
  hold(): void {
    this.#held = true;
    for (const entry of this.#entries.values()) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
    }
  }

  /** Start the clocks again, each with its whole time to live. */
  release(): void {
    if (!this.#held) return;
    this.#held = false;
    for (const [key, entry] of this.#entries) entry.timer = this.#timer(key);
  }

  #timer(key: K): ReturnType<typeof setTimeout> {
    return setTimeout(() => this.#drop(key), this.#limits.ttlMs);
  }

  /** Forget `key` without calling `onDrop` (its owner removed it). */
  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  /** Forget everything and stop every timer, without calling `onDrop`. */
  clear(): void {
    for (const entry of this.#entries.values()) clearTimeout(entry.timer);
    this.#entries.clear();
    this.#bytes = 0;
  }

  #drop(key: K): void {
    if (!this.#entries.has(key)) return;
    this.delete(key);
    this.#onDrop(key);
  }
}
