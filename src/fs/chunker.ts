/**
 * Cutting a stream of byte chunks of any sizes into pieces of one size, so
 * that a writer makes one large write (or request) per piece whatever the
 * producer hands it: 64 KiB chunks are gathered, a 100 MiB chunk is cut.
 *
 * @module
 */

/** The default piece size of the streams: 1 MiB. */
export const DEFAULT_CHUNK_BYTES: number = 1024 * 1024;

/** The largest accepted piece size: 64 MiB. */
export const MAX_CHUNK_BYTES: number = 64 * 1024 * 1024;

/**
 * A `chunkBytes` option checked: an integer from 1 to
 * {@linkcode MAX_CHUNK_BYTES}, or `fallback` when absent.
 *
 * @throws {RangeError} naming the bad value
 *
 * @example
 * ```ts
 * import { checkChunkBytes } from "./chunker.ts";
 * checkChunkBytes(undefined, 1024); // 1024
 * checkChunkBytes(4096, 1024); // 4096
 * ```
 */
export function checkChunkBytes(value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > MAX_CHUNK_BYTES) {
    throw new RangeError(
      `chunkBytes must be an integer from 1 to ${MAX_CHUNK_BYTES}, got ${value}`,
    );
  }
  return value;
}

/**
 * Fail unless `chunk` is a `Uint8Array` (what a byte stream carries).
 *
 * @throws {TypeError} naming what it got instead
 *
 * @example
 * ```ts
 * import { requireBytes } from "./chunker.ts";
 * requireBytes(new Uint8Array(1)); // fine
 * ```
 */
export function requireBytes(chunk: unknown): asserts chunk is Uint8Array {
  if (!(chunk instanceof Uint8Array)) {
    const got = chunk === null
      ? "null"
      : typeof chunk === "object"
      ? chunk.constructor?.name ?? "object"
      : typeof chunk;
    throw new TypeError(`a file stream takes Uint8Array chunks, got ${got}`);
  }
}

/**
 * Gathers chunks into pieces of exactly `size` bytes (the last one, from
 * {@linkcode Chunker.flush}, may be shorter). A piece is either a view of
 * the chunk pushed (when it alone fills pieces: no copy) or a fresh buffer
 * the chunker owns; bytes kept between pushes are always copied, so the
 * producer may reuse its buffer once `push` returns.
 *
 * @example
 * ```ts
 * import { Chunker } from "./chunker.ts";
 * const c = new Chunker(4);
 * c.push(new Uint8Array([1, 2, 3])); // []
 * c.push(new Uint8Array([4, 5])); // [Uint8Array [1, 2, 3, 4]]
 * c.flush(); // Uint8Array [5]
 * ```
 */
export class Chunker {
  readonly #size: number;
  #pending: Uint8Array | undefined;
  #filled = 0;

  /** @param size the piece size in bytes (at least 1) */
  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) {
      throw new RangeError(`piece size must be a positive integer, got ${size}`);
    }
    this.#size = size;
  }

  /** Bytes held back, waiting for more to fill a piece. */
  get pendingBytes(): number {
    return this.#filled;
  }

  /**
   * Add `chunk`; returns the pieces it completes, in order.
   *
   * @throws {TypeError} when `chunk` is not a `Uint8Array`
   */
  push(chunk: Uint8Array): Uint8Array[] {
    requireBytes(chunk);
    const pieces: Uint8Array[] = [];
    let at = 0;
    if (this.#filled > 0) {
      const take = Math.min(this.#size - this.#filled, chunk.byteLength);
      this.#pending!.set(chunk.subarray(0, take), this.#filled);
      this.#filled += take;
      at = take;
      if (this.#filled < this.#size) return pieces;
      pieces.push(this.#pending!);
      this.#pending = undefined;
      this.#filled = 0;
    }
    while (chunk.byteLength - at >= this.#size) {
      pieces.push(chunk.subarray(at, at + this.#size));
      at += this.#size;
    }
    if (at < chunk.byteLength) {
      this.#pending = new Uint8Array(this.#size);
      this.#pending.set(chunk.subarray(at), 0);
      this.#filled = chunk.byteLength - at;
    }
    return pieces;
  }

  /** The bytes held back (possibly none), leaving the chunker empty. */
  flush(): Uint8Array {
    const rest = this.#pending?.subarray(0, this.#filled) ?? new Uint8Array(0);
    this.#pending = undefined;
    this.#filled = 0;
    return rest;
  }
}
