/**
 * An unbounded single-consumer queue that a producer pushes into from
 * callbacks and a consumer drains with `for await` or as a ReadableStream.
 *
 * @module
 */

/**
 * A push-to-pull bridge: values pushed before anyone reads are kept, in
 * order, until read. Ending with an error delivers the buffered values
 * first, then the error.
 *
 * @example
 * ```ts
 * import { AsyncQueue } from "./async_queue.ts";
 * const q = new AsyncQueue<number>();
 * q.push(1);
 * q.push(2);
 * q.end();
 * for await (const n of q) console.log(n); // 1, 2
 * ```
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #head = 0;
  #ended = false;
  #error: { value: unknown } | undefined;
  #discarding = false;
  #waiters: (() => void)[] = [];
  #onCancel: (() => void) | undefined;

  /** @param onCancel runs when the consumer stops early (`return` or stream cancel) */
  constructor(onCancel?: () => void) {
    this.#onCancel = onCancel;
  }

  /** Items pushed but not read yet. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /** Whether `end` was called. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Add an item; ignored after `end` or once the consumer has gone. */
  push(item: T): void {
    if (this.#ended || this.#discarding) return;
    this.#items.push(item);
    this.#notify();
  }

  /** No more items; `error` is raised to the consumer after the buffered items. */
  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    if (error !== undefined) this.#error = { value: error };
    this.#notify();
  }

  /** Wait for the next item; `done` once ended and drained. */
  async next(): Promise<IteratorResult<T, undefined>> {
    while (this.size === 0 && !this.#ended) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    if (this.size > 0) {
      const item = this.#items[this.#head];
      this.#items[this.#head] = undefined as T;
      this.#head++;
      // Compact now and then so a long-lived queue does not grow forever.
      if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
        this.#items = this.#items.slice(this.#head);
        this.#head = 0;
      }
      return { value: item, done: false };
    }
    if (this.#error) {
      const { value } = this.#error;
      this.#error = undefined;
      throw value;
    }
    return { value: undefined, done: true };
  }

  /** The consumer is not interested any more: drop what is buffered and all later items. */
  cancel(): void {
    if (this.#discarding) return;
    this.#discarding = true;
    this.#items = [];
    this.#head = 0;
    this.#error = undefined;
    this.#ended = true;
    this.#notify();
    this.#onCancel?.();
  }

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return {
      next: () => this.next(),
      return: (): Promise<IteratorResult<T, undefined>> => {
        this.cancel();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  /** The same items as a pull-based ReadableStream (reads drive the queue). */
  toReadableStream(): ReadableStream<T> {
    return new ReadableStream<T>({
      pull: async (controller) => {
        try {
          const r = await this.next();
          if (r.done) controller.close();
          else controller.enqueue(r.value);
        } catch (err) {
          controller.error(err);
        }
      },
      cancel: () => this.cancel(),
    }, { highWaterMark: 0 });
  }

  #notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
