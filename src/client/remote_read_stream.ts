/**
 * `readStream` of the remote filesystem: pipelined ranged `fs/readFile`
 * requests, delivered in order, with a bounded number in flight.
 *
 * @module
 */
import type { ReadRangeResult } from "../fs/types.ts";

/** The calls a remote read stream makes; they throw `FileSystemError`s naming the path. */
export interface ReadStreamCalls {
  /** A ranged `fs/readFile`, or undefined when the server has none. */
  readRange: ((offset: number, length: number) => Promise<ReadRangeResult>) | undefined;
  /** A whole `fs/readFile` (for a server without ranged reads). */
  readFile(): Promise<Uint8Array>;
}

/** One request in flight: the range it asked for and its answer. */
interface Pending {
  offset: number;
  answer: Promise<ReadRangeResult>;
}

/**
 * The pipeline of one stream: requests go out `pieceBytes` apart, at most
 * `window` at a time, and are consumed in the order they were sent, so
 * the bytes arrive in order however the server orders its answers.
 * Requests run ahead of the consumer only up to the window, so memory
 * stays within `window * pieceBytes` plus the chunk being handed over.
 */
class RangePipeline {
  readonly #read: (offset: number, length: number) => Promise<ReadRangeResult>;
  readonly #pieceBytes: number;
  readonly #window: number;
  readonly #pending: Pending[] = [];
  /** Offset of the next request. */
  #next = 0;
  /** Bytes delivered so far. */
  #position = 0;
  /** The file's size as last answered; unknown until the first answer. */
  #size: number | undefined;

  constructor(
    read: (offset: number, length: number) => Promise<ReadRangeResult>,
    pieceBytes: number,
    window: number,
  ) {
    this.#read = read;
    this.#pieceBytes = pieceBytes;
    this.#window = window;
  }

  /**
   * Send requests until the window is full or the known end is covered.
   * Before the first answer only one request goes out (a small file needs
   * no more); a file that says its size is 0 (`/proc`) gets one at a time.
   */
  fill(): void {
    const horizon = this.#size === undefined ? 1 : Math.max(this.#size, this.#position + 1);
    while (this.#pending.length < this.#window && this.#next < horizon) {
      const offset = this.#next;
      const answer = this.#read(offset, this.#pieceBytes);
      // Answers nobody waits for any more (after an end or a failure) must not surface.
      answer.catch(() => {});
      this.#pending.push({ offset, answer });
      this.#next += this.#pieceBytes;
    }
  }

  /** The next piece in order; `done` once the end of the file was delivered. */
  async next(): Promise<{ data: Uint8Array; done: boolean }> {
    this.fill();
    const head = this.#pending.shift()!;
    let result: ReadRangeResult;
    try {
      result = await head.answer;
    } catch (err) {
      this.drop();
      throw err;
    }
    this.#size = result.size;
    this.#position = head.offset + result.data.byteLength;
    // An empty piece ends the stream even without `eof`, so that a server
    // that keeps answering nothing cannot make the stream spin.
    if (result.eof || result.data.byteLength === 0) {
      this.drop();
      return { data: result.data, done: true };
    }
    if (result.data.byteLength < this.#pieceBytes) {
      // A short piece that is not the end (a server that reads less than
      // asked): the requests behind it assumed a full one, so start over
      // from where it stopped.
      this.drop();
      this.#next = this.#position;
    }
    this.fill();
    return { data: result.data, done: false };
  }

  /** Forget every request in flight (their answers are ignored). */
  drop(): void {
    this.#pending.length = 0;
  }
}

/**
 * A remote file's bytes as a stream. With ranged reads, pieces of
 * `pieceBytes` are requested `window` at a time and delivered in order;
 * without them (a plain v0 server), the file comes in one `fs/readFile`,
 * within that server's read limit, and is handed on in pieces.
 *
 * @param check throws the `FileSystemError` of a path refused before any request
 *
 * @example
 * ```ts
 * import { remoteReadStream } from "./remote_read_stream.ts";
 * const stream = remoteReadStream(
 *   { readRange: undefined, readFile: () => Promise.resolve(new Uint8Array(10)) },
 *   { pieceBytes: 4, window: 2, check: () => {} },
 * );
 * for await (const piece of stream) console.log(piece.byteLength); // 4, 4, 2
 * ```
 */
export function remoteReadStream(
  calls: ReadStreamCalls,
  options: { pieceBytes: number; window: number; check: () => void },
): ReadableStream<Uint8Array> {
  const { pieceBytes, window, check } = options;
  if (!calls.readRange) {
    return new ReadableStream<Uint8Array>({
      start: async (controller) => {
        check();
        const whole = await calls.readFile();
        for (let at = 0; at < whole.byteLength; at += pieceBytes) {
          controller.enqueue(whole.subarray(at, at + pieceBytes));
        }
        controller.close();
      },
    });
  }
  const pipeline = new RangePipeline(calls.readRange, pieceBytes, window);
  return new ReadableStream<Uint8Array>({
    // Async, so that a refused path errors the stream instead of throwing here.
    // deno-lint-ignore require-await
    start: async () => {
      check();
      pipeline.fill();
    },
    pull: async (controller) => {
      const { data, done } = await pipeline.next();
      if (data.byteLength > 0) controller.enqueue(data);
      if (done) controller.close();
    },
    cancel: () => pipeline.drop(),
  }, { highWaterMark: 0 });
}
