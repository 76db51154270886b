/**
 * Decides when a child's output is complete: after its exit, once every
 * stream reached EOF, or once the streams stayed silent for a while because
 * a leftover grandchild still holds them open.
 *
 * @module
 */
import type { ExitStatus } from "./types.ts";

/**
 * Tracks open streams and the exit of one child and calls `onComplete`
 * exactly once, when nothing more can be read.
 *
 * The silence timer only runs while reading is not paused, so flow control
 * never turns unread output into a premature end. When it fires, the final
 * check is deferred by one turn of the event loop so that a read that was
 * already pending gets delivered first.
 */
export class ExitDrain {
  #open: number;
  #quietMs: number;
  #status: ExitStatus | undefined;
  #paused = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #dataSinceTimer = false;
  #done = false;
  #onComplete: (status: ExitStatus, forced: boolean) => void;

  /**
   * @param openStreams the number of output streams to wait for
   * @param quietMs silence after exit that ends the wait
   * @param onComplete called once; `forced` when streams were still open
   */
  constructor(
    openStreams: number,
    quietMs: number,
    onComplete: (status: ExitStatus, forced: boolean) => void,
  ) {
    this.#open = openStreams;
    this.#quietMs = quietMs;
    this.#onComplete = onComplete;
  }

  /** Whether the exit status is known (the child has been reaped). */
  get exited(): boolean {
    return this.#status !== undefined;
  }

  /** Record that data arrived. */
  data(): void {
    this.#dataSinceTimer = true;
    if (this.#timer !== undefined) this.#arm();
  }

  /** Record that one stream reached EOF (or failed). */
  streamEnded(): void {
    this.#open--;
    this.#check();
  }

  /** Record the child's exit. */
  exit(status: ExitStatus): void {
    if (this.#status) return;
    this.#status = { ...status, exitedAt: status.exitedAt ?? performance.now() };
    this.#check();
    if (!this.#done) this.#arm();
  }

  /** Reading was paused: silence does not count. */
  pause(): void {
    this.#paused = true;
    this.#clear();
  }

  /** Reading resumed. */
  resume(): void {
    this.#paused = false;
    if (this.#status && !this.#done) this.#arm();
  }

  #arm(): void {
    this.#clear();
    if (this.#paused || this.#done) return;
    this.#dataSinceTimer = false;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // Reads that became ready while the timer was due are delivered in
      // the poll phase, which runs before setImmediate callbacks.
      setImmediate(() => {
        if (this.#done || this.#paused) return;
        if (this.#dataSinceTimer) {
          this.#arm();
          return;
        }
        this.#finish(true);
      });
    }, this.#quietMs);
  }

  #clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #check(): void {
    if (this.#status && this.#open <= 0) this.#finish(false);
  }

  #finish(forced: boolean): void {
    if (this.#done || !this.#status) return;
    this.#done = true;
    this.#clear();
    this.#onComplete(this.#status, forced);
  }
}
