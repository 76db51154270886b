/**
 * Writes to a non-blocking file descriptor without ever blocking a thread
 * or spinning: a full terminal answers EAGAIN, and the write is retried on
 * a backing-off timer until it goes through or the writer is cancelled.
 *
 * @module
 */
import { write as fsWrite } from "node:fs";
import { partialWritesCounted } from "../runtime/runtime.ts";

/** Retry delays after EAGAIN, in ms; the last one repeats. */
export const EAGAIN_BACKOFF_MS: readonly number[] = [1, 2, 5, 10, 20, 50];

/** The delay before retry number `attempt` (from 0) of a write that met EAGAIN. */
export function eagainDelay(attempt: number): number {
  return EAGAIN_BACKOFF_MS[Math.min(attempt, EAGAIN_BACKOFF_MS.length - 1)];
}

interface Pending {
  data: Uint8Array;
  offset: number;
  resolve(): void;
  reject(err: unknown): void;
}

/** Options of {@linkcode FdWriter}. */
export interface FdWriterOptions {
  /**
   * The most bytes handed to one `write` call. By default unlimited where
   * the runtime reports partial writes, and 1 where it does not (Deno: on
   * EAGAIN after a partial write it reports an error and loses the count,
   * so a retry would write the written part again; one byte at a time
   * keeps the count exact, at the cost of speed).
   */
  chunkBytes?: number;
}

/** Thrown for writes still queued when the writer is cancelled. */
export class WriterCancelledError extends Error {
  /** @param reason why the writer stopped */
  constructor(reason: string) {
    super(`write cancelled: ${reason}`);
    this.name = "WriterCancelledError";
  }
}

/**
 * An ordered write queue over one non-blocking fd.
 *
 * @example
 * ```ts
 * import { FdWriter } from "./fd_writer.ts";
 * declare const masterFd: number;
 * const w = new FdWriter(masterFd);
 * await w.write(new TextEncoder().encode("ls\n"));
 * ```
 */
export class FdWriter {
  #fd: number;
  #queue: Pending[] = [];
  #busy = false;
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #cancelled: string | undefined;
  #chunkBytes: number;

  /**
   * Write to one descriptor.
   *
   * @param fd a descriptor opened (or set) with O_NONBLOCK
   */
  constructor(fd: number, options: FdWriterOptions = {}) {
    this.#fd = fd;
    this.#chunkBytes = options.chunkBytes ?? (partialWritesCounted ? Infinity : 1);
  }

  /** Bytes queued and not yet written. */
  get pendingBytes(): number {
    return this.#queue.reduce((n, p) => n + p.data.length - p.offset, 0);
  }

  /** Queue `data`; resolves once all of it has been written. */
  write(data: Uint8Array): Promise<void> {
    if (this.#cancelled !== undefined) {
      return Promise.reject(new WriterCancelledError(this.#cancelled));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ data, offset: 0, resolve, reject });
      if (!this.#busy && this.#timer === undefined) this.#pump();
    });
  }

  /** Stop: reject what is queued and every later write. */
  cancel(reason: string): void {
    if (this.#cancelled !== undefined) return;
    this.#cancelled = reason;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    // A write in flight may well have reached the descriptor (a fast child
    // reads it, answers and exits before its callback runs): its callback
    // settles it by what was written, instead of calling it lost.
    const inFlight = this.#busy ? this.#queue[0] : undefined;
    const queue = inFlight ? this.#queue.slice(1) : this.#queue;
    this.#queue = inFlight ? [inFlight] : [];
    for (const p of queue) p.reject(new WriterCancelledError(reason));
  }

  #pump(): void {
    const head = this.#queue[0];
    if (!head || this.#cancelled !== undefined) return;
    if (head.offset >= head.data.length) {
      this.#queue.shift();
      head.resolve();
      this.#pump();
      return;
    }
    this.#busy = true;
    fsWrite(
      this.#fd,
      head.data,
      head.offset,
      Math.min(head.data.length - head.offset, this.#chunkBytes),
      null,
      (err, written) => {
        this.#busy = false;
        if (this.#cancelled !== undefined) {
          this.#queue = [];
          if (!err && head.offset + written >= head.data.length) head.resolve();
          else head.reject(new WriterCancelledError(this.#cancelled));
          return;
        }
        if (err) {
          const code = (err as { code?: string }).code;
          if (code === "EAGAIN" || code === "EWOULDBLOCK") {
            const delay = eagainDelay(this.#attempt++);
            this.#timer = setTimeout(() => {
              this.#timer = undefined;
              this.#pump();
            }, delay);
            return;
          }
          this.#queue.shift();
          head.reject(err);
          this.cancel(`an earlier write failed: ${code ?? err.message}`);
          return;
        }
        this.#attempt = 0;
        head.offset += written;
        this.#pump();
      },
    );
  }
}
