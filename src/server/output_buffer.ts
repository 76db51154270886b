/**
 * The retained output of one process: numbered chunks, capped in bytes,
 * oldest evicted first, read by sequence number.
 *
 * @module
 */
import type { StreamName } from "../protocol/methods.ts";

/** One retained chunk. */
export interface OutputChunk {
  /** Sequence number, from 1, shared by all streams of the process. */
  seq: number;
  /** The stream it was read from. */
  stream: StreamName;
  /** The bytes. */
  data: Uint8Array;
}

/** What {@linkcode OutputBuffer.read} returns. */
export interface OutputSlice {
  /** Chunks after `afterSeq`, oldest first. */
  chunks: OutputChunk[];
  /** Last returned seq + 1, or the next seq to be assigned. */
  nextSeq: number;
  /** True when nothing retained lies beyond `nextSeq`. */
  complete: boolean;
  /** Seqs after `afterSeq` that were evicted, when there are any. */
  evicted?: { fromSeq: number; toSeq: number };
}

/**
 * A byte-capped ring of numbered chunks. The newest chunk is always kept,
 * even when it alone exceeds the cap.
 *
 * @example
 * ```ts
 * import { OutputBuffer } from "./output_buffer.ts";
 * const buf = new OutputBuffer(4);
 * buf.append("stdout", new Uint8Array(3)); // seq 1
 * buf.append("stdout", new Uint8Array(3)); // seq 2, evicts seq 1
 * buf.read(0).evicted; // { fromSeq: 1, toSeq: 1 }
 * ```
 */
export class OutputBuffer {
  #cap: number;
  #chunks: OutputChunk[] = [];
  #head = 0;
  #bytes = 0;
  #nextSeq = 1;

  /** @param capBytes the most bytes to retain */
  constructor(capBytes: number) {
    this.#cap = capBytes;
  }

  /** The seq the next chunk will get. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** Bytes currently retained. */
  get retainedBytes(): number {
    return this.#bytes;
  }

  /** The oldest retained seq (equal to `nextSeq` when empty). */
  get firstSeq(): number {
    return this.#head < this.#chunks.length ? this.#chunks[this.#head].seq : this.#nextSeq;
  }

  /**
   * Take the next seq for something that is not output (the Codex
   * dialect numbers `exited` and `closed` in the same sequence).
   */
  reserveSeq(): number {
    return this.#nextSeq++;
  }

  /** Store a chunk and return it with its seq. */
  append(stream: StreamName, data: Uint8Array): OutputChunk {
    const chunk = { seq: this.#nextSeq++, stream, data };
    this.#chunks.push(chunk);
    this.#bytes += data.byteLength;
    while (this.#bytes > this.#cap && this.#chunks.length - this.#head > 1) {
      this.#bytes -= this.#chunks[this.#head].data.byteLength;
      this.#head++;
    }
    // Compact the array once the evicted prefix dominates it.
    if (this.#head > 1024 && this.#head * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
    return chunk;
  }

  /**
   * Chunks with `seq > afterSeq`. The first is returned whatever its size;
   * later ones stop before the total would exceed `maxBytes`.
   */
  read(afterSeq: number, maxBytes: number = Infinity): OutputSlice {
    const first = this.firstSeq;
    const from = Math.max(afterSeq + 1, first);
    const chunks: OutputChunk[] = [];
    let total = 0;
    let i = this.#head + (from - first);
    for (; i < this.#chunks.length; i++) {
      const c = this.#chunks[i];
      if (chunks.length > 0 && total + c.data.byteLength > maxBytes) break;
      chunks.push(c);
      total += c.data.byteLength;
    }
    // Complete: no retained chunk is left beyond; then the next read starts
    // after every seq given out, reserved ones (reserveSeq) included.
    const complete = i >= this.#chunks.length;
    const slice: OutputSlice = {
      chunks,
      nextSeq: complete ? this.#nextSeq : chunks[chunks.length - 1].seq + 1,
      complete,
    };
    if (afterSeq + 1 < first) slice.evicted = { fromSeq: afterSeq + 1, toSeq: first - 1 };
    return slice;
  }
}
