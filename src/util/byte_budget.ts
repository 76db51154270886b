/**
 * A budget of bytes shared by concurrent operations: each takes its share
 * before it works and gives it back after, and one that does not fit waits
 * its turn (first come, first served). It bounds the memory that block
 * reads and writes hold at once, however many requests a client sends.
 *
 * @module
 */

/**
 * Bytes in flight, at most `limit` at a time.
 *
 * @example
 * ```ts
 * import { ByteBudget } from "./byte_budget.ts";
 * const budget = new ByteBudget(1024);
 * const release = await budget.take(512);
 * budget.inUse; // 512
 * release();
 * ```
 */
export class ByteBudget {
  /** The most bytes taken at once. */
  readonly limit: number;
  #inUse = 0;
  #waiting: { bytes: number; grant: () => void }[] = [];

  /** @param limit the most bytes taken at once (at least 1) */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`a byte budget must be a positive integer, got ${limit}`);
    }
    this.limit = limit;
  }

  /** The bytes taken now. */
  get inUse(): number {
    return this.#inUse;
  }

  /**
   * Take `bytes` (more than the limit counts as the whole limit, so a big
   * share waits for everything else and then runs alone). Resolves with the
   * function that gives them back; calling it again does nothing.
   */
  take(bytes: number): Promise<() => void> {
    const share = Math.min(Math.max(0, bytes), this.limit);
    if (this.#waiting.length === 0 && this.#inUse + share <= this.limit) {
      this.#inUse += share;
      return Promise.resolve(this.#releaser(share));
    }
    return new Promise((resolve) => {
      this.#waiting.push({ bytes: share, grant: () => resolve(this.#releaser(share)) });
    });
  }

  #releaser(share: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inUse -= share;
      this.#grantWaiting();
    };
  }

  #grantWaiting(): void {
    while (this.#waiting.length > 0) {
      const next = this.#waiting[0];
      if (this.#inUse + next.bytes > this.limit) return;
      this.#waiting.shift();
      this.#inUse += next.bytes;
      next.grant();
    }
  }
}
