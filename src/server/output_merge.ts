/**
 * Output of one process merged between flushes: the reads of one turn of
 * the event loop become one numbered chunk (and one notification). The
 * bytes are copied in, because a backend lends them only for the call.
 *
 * @module
 */
import type { StreamName } from "../protocol/methods.ts";

/**
 * Output read in one turn of the event loop is merged into one chunk up to
 * this size: a PTY yields about 4 KiB per read, and one notification per
 * read spends more time on framing than on data. Pipe reads are already
 * this large; merging them too only added a copy (measured: 256 MiB piped
 * at ~300 MiB/s with a 1 MiB limit, ~410 MiB/s with this one).
 */
export const MERGE_MAX_BYTES = 64 * 1024;

/** A merge buffer's first size: most commands print less than this. */
const MERGE_FIRST_BYTES = 4 * 1024;

/**
 * Full-size buffers of finished processes, for the next ones: a server
 * that runs thousands of short commands allocates a handful, not one per
 * command (dead buffers outside the heap wait long for the collector).
 */
const spareBuffers: Uint8Array[] = [];
const MAX_SPARE_BUFFERS = 16;

/**
 * One process's merge buffer.
 *
 * @example
 * ```ts
 * import { OutputMerge } from "./output_merge.ts";
 * const merge = new OutputMerge();
 * merge.add("stdout", new Uint8Array([104, 105]), () => {});
 * merge.take(); // { stream: "stdout", data: Uint8Array [104, 105] }
 * ```
 */
export class OutputMerge {
  #stream: StreamName | undefined;
  #buf: Uint8Array | undefined;
  #bytes = 0;

  /** The stream of what is merged, if anything is. */
  get stream(): StreamName | undefined {
    return this.#bytes > 0 ? this.#stream : undefined;
  }

  /** Bytes merged so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Copy `data` in. `flush` is called whenever the buffer is full, and must
   * {@linkcode take} what it holds; the caller flushes a different stream's
   * bytes before adding these.
   */
  add(stream: StreamName, data: Uint8Array, flush: () => void): void {
    let at = 0;
    while (at < data.byteLength) {
      const into = this.#room(data.byteLength - at);
      this.#stream = stream;
      const n = Math.min(into.length - this.#bytes, data.byteLength - at);
      into.set(data.subarray(at, at + n), this.#bytes);
      this.#bytes += n;
      at += n;
      if (this.#bytes === into.length) flush();
    }
  }

  /** The merged bytes (a view: use them before the next add) and their stream; then empty. */
  take(): { stream: StreamName; data: Uint8Array } | undefined {
    if (this.#bytes === 0 || this.#stream === undefined) return undefined;
    const taken = { stream: this.#stream, data: this.#buf!.subarray(0, this.#bytes) };
    this.#bytes = 0;
    return taken;
  }

  /** The process is done: its buffer goes to the spares. */
  release(): void {
    const buf = this.#buf;
    this.#buf = undefined;
    this.#bytes = 0;
    if (buf?.length === MERGE_MAX_BYTES && spareBuffers.length < MAX_SPARE_BUFFERS) {
      spareBuffers.push(buf);
    }
  }

  /** The buffer, grown (up to the limit) to take `need` more bytes. */
  #room(need: number): Uint8Array {
    const buf = this.#buf;
    if (buf && (buf.length - this.#bytes >= need || buf.length === MERGE_MAX_BYTES)) return buf;
    const size = Math.min(
      MERGE_MAX_BYTES,
      Math.max(MERGE_FIRST_BYTES, (buf?.length ?? 0) * 4, this.#bytes + need),
    );
    const grown = size === MERGE_MAX_BYTES
      ? spareBuffers.pop() ?? new Uint8Array(size)
      : new Uint8Array(size);
    if (buf) grown.set(buf.subarray(0, this.#bytes));
    this.#buf = grown;
    return grown;
  }
}
