/**
 * Writes to a non-blocking file descriptor without ever blocking a thread
 * or spinning: each write is one non-blocking `write(2)` on the calling
 * thread, a full terminal answers EAGAIN, and the rest is retried on a
 * backing-off timer until it goes through or the writer is cancelled.
 *
 * @module
 */
import { writeSync } from "node:fs";
import { constants } from "node:os";
import { errnoName } from "../runtime/errno.ts";

/** Retry delays after EAGAIN, in ms; the last one repeats. */
export const EAGAIN_BACKOFF_MS: readonly number[] = [1, 2, 5, 10, 20, 50];

/** The delay before retry number `attempt` (from 0) of a write that met EAGAIN. */
export function eagainDelay(attempt: number): number {
  return EAGAIN_BACKOFF_MS[Math.min(attempt, EAGAIN_BACKOFF_MS.length - 1)];
}

/**
 * One non-blocking `write(2)`: the bytes written (a partial write counts
 * exactly), or a negative errno (`-EAGAIN` when the descriptor is full).
 */
export type WriteOnce = (fd: number, bytes: Uint8Array) => number;

/**
 * Node's `fs.writeSync`: one system call, partial writes counted, EAGAIN
 * thrown. (Not Deno's, which writes until everything is written: on a full
 * terminal it would never return.)
 */
export const nodeWriteOnce: WriteOnce = (fd, bytes) => {
  try {
    return writeSync(fd, bytes);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EAGAIN" || code === "EWOULDBLOCK") return -constants.errno.EAGAIN;
    throw err;
  }
};

interface Pending {
  data: Uint8Array;
  offset: number;
  resolve(): void;
  reject(err: unknown): void;
}

/** Thrown for writes still queued when the writer is cancelled. */
export class WriterCancelledError extends Error {
  /** @param reason why the writer stopped */
  constructor(reason: string) {
    super(`write cancelled: ${reason}`);
    this.name = "WriterCancelledError";
  }
}

/** A failed `write(2)`, with the errno's name as `code` (`EIO`, `EBADF`). */
export class FdWriteError extends Error {
  /** The errno's name. */
  readonly code: string;

  /** @param fd the descriptor, @param errno the (positive) errno */
  constructor(fd: number, errno: number) {
    const code = errnoName(errno) ?? `errno ${errno}`;
    super(`write to fd ${fd} failed: ${code}`);
    this.name = "FdWriteError";
    this.code = code;
  }
}

/**
 * Queues writes to one non-blocking descriptor and writes them in order.
 * A write that finds room goes out before `write()` returns: a keystroke
 * reaches the terminal with no hop through a thread pool.
 *
 * @example
 * ```ts
 * import { FdWriter, nodeWriteOnce } from "./fd_writer.ts";
 * const w = new FdWriter(1, nodeWriteOnce);
 * await w.write(new TextEncoder().encode("hello\n"));
 * ```
 */
export class FdWriter {
  #fd: number;
  #writeOnce: WriteOnce;
  #queue: Pending[] = [];
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #cancelled: string | undefined;

  /**
   * @param fd a descriptor opened (or set) with O_NONBLOCK
   * @param writeOnce the runtime's single non-blocking write
   */
  constructor(fd: number, writeOnce: WriteOnce) {
    this.#fd = fd;
    this.#writeOnce = writeOnce;
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
      if (this.#timer === undefined) this.#pump();
    });
  }

  /** Stop: reject what is queued and every later write. */
  cancel(reason: string): void {
    if (this.#cancelled !== undefined) return;
    this.#cancelled = reason;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const queue = this.#queue;
    this.#queue = [];
    for (const p of queue) p.reject(new WriterCancelledError(reason));
  }

  /** Write what is queued until it is done, the descriptor is full, or a write fails. */
  #pump(): void {
    while (this.#cancelled === undefined && this.#queue.length > 0) {
      const head = this.#queue[0];
      if (head.offset >= head.data.length) {
        this.#queue.shift();
        head.resolve();
        continue;
      }
      let n: number;
      try {
        n = this.#writeOnce(this.#fd, head.data.subarray(head.offset));
      } catch (err) {
        this.#fail(head, err);
        return;
      }
      if (n === -constants.errno.EAGAIN) {
        this.#timer = setTimeout(() => {
          this.#timer = undefined;
          this.#pump();
        }, eagainDelay(this.#attempt++));
        return;
      }
      if (n < 0) {
        this.#fail(head, new FdWriteError(this.#fd, -n));
        return;
      }
      this.#attempt = 0;
      head.offset += n;
    }
  }

  #fail(head: Pending, err: unknown): void {
    this.#queue.shift();
    head.reject(err);
    const code = (err as { code?: string }).code ?? (err as Error).message;
    this.cancel(`an earlier write failed: ${code}`);
  }
}
