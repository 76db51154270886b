/**
 * Decides when a child's output is complete: after its exit, once every
 * stream reached EOF or a fence written behind the output came out, or once
 * the streams stayed silent for a while because a leftover grandchild still
 * holds them open and no fence could be written.
 *
 * Silence is a weak signal: it is measured by a timer on the event loop,
 * and a busy loop can run that timer before it gets round to reading a
 * stream that has output waiting (Deno polls terminals after timers and
 * immediates when many operations complete at once). A fence is exact, so
 * while one is on its way silence never ends the wait.
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
  #fenced = false;
  #confirmQuiet: () => boolean;
  #onComplete: (status: ExitStatus, forced: boolean) => void;

  /**
   * @param openStreams the number of output streams to wait for
   * @param quietMs silence after exit that ends the wait
   * @param onComplete called once; `forced` when streams were still open
   * @param confirmQuiet asked once silence has lasted `quietMs`; answering
   *   false (e.g. because a blocked fence went out after all) waits on
   */
  constructor(
    openStreams: number,
    quietMs: number,
    onComplete: (status: ExitStatus, forced: boolean) => void,
    confirmQuiet: () => boolean = () => true,
  ) {
    this.#open = openStreams;
    this.#quietMs = quietMs;
    this.#onComplete = onComplete;
    this.#confirmQuiet = confirmQuiet;
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

  /**
   * A fence has been written behind all of the child's output: the end of
   * the stream (when the fence is read) ends the wait, silence no longer.
   */
  fence(): void {
    this.#fenced = true;
    this.#clear();
  }

  /** Whether a fence is on its way. */
  get fenced(): boolean {
    return this.#fenced;
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
    if (this.#paused || this.#done || this.#fenced) return;
    this.#dataSinceTimer = false;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // Reads that became ready while the timer was due are delivered in
      // the poll phase, which runs before setImmediate callbacks.
      setImmediate(() => {
        if (this.#done || this.#paused || this.#fenced) return;
        if (this.#dataSinceTimer || !this.#confirmQuiet()) {
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
