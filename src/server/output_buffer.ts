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

/** A retained chunk as stored: its place in the ring, or its own copy. */
interface Entry {
  seq: number;
  stream: StreamName;
  /** Offset of its first byte in the stream of all bytes ever appended. */
  at: number;
  length: number;
  /** Set for a chunk too large for the ring, kept alone in a copy. */
  own?: Uint8Array;
}

/** The ring's first size; it doubles as retained output needs, up to the cap. */
const INITIAL_RING_BYTES = 4096;

/**
 * A byte-capped ring of numbered chunks. The newest chunk is always kept,
 * even when it alone exceeds the cap.
 *
 * The bytes live in one ring buffer that grows to the cap and is then
 * reused for the process's whole life: output that streams through costs
 * no allocation, and nothing is left for the garbage collector (chunks kept
 * as separate arrays piled up as garbage faster than it ran).
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
  #ring = new Uint8Array(0);
  #entries: Entry[] = [];
  #head = 0;
  #bytes = 0;
  /** Bytes ever written to the ring: where the next chunk starts. */
  #end = 0;
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
    return this.#head < this.#entries.length ? this.#entries[this.#head].seq : this.#nextSeq;
  }

  /**
   * Take the next seq for something that is not output (the Codex
   * dialect numbers `exited` and `closed` in the same sequence).
   */
  reserveSeq(): number {
    return this.#nextSeq++;
  }

  /** Store a copy of `data` (callers may reuse it) and return its seq. */
  append(stream: StreamName, data: Uint8Array): { seq: number } {
    const entry: Entry = { seq: this.#nextSeq++, stream, at: this.#end, length: data.byteLength };
    while (this.#bytes + data.byteLength > this.#cap && this.#entries.length > this.#head) {
      this.#bytes -= this.#entries[this.#head++].length;
    }
    if (data.byteLength > this.#cap) {
      entry.own = data.slice();
    } else {
      this.#reserve(this.#bytes + data.byteLength);
      this.#copyIn(data);
    }
    this.#entries.push(entry);
    this.#bytes += data.byteLength;
    // Compact the array once the evicted prefix dominates it.
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
    return { seq: entry.seq };
  }

  /** Grow the ring (doubling, at most to the cap) to hold `need` bytes. */
  #reserve(need: number): void {
    if (need <= this.#ring.length) return;
    let size = Math.max(INITIAL_RING_BYTES, this.#ring.length * 2);
    while (size < need) size *= 2;
    const ring = new Uint8Array(Math.min(size, this.#cap));
    const old = this.#ring;
    this.#ring = ring;
    for (let i = this.#head; i < this.#entries.length; i++) {
      const e = this.#entries[i];
      if (!e.own) this.#copyIn(bytesOf(old, e), e.at);
    }
  }

  /** Copy `data` into the ring at stream offset `at` (default: the end). */
  #copyIn(data: Uint8Array, at = -1): void {
    const ring = this.#ring;
    if (at < 0) {
      at = this.#end;
      this.#end += data.byteLength;
    }
    const pos = at % ring.length;
    const first = Math.min(data.byteLength, ring.length - pos);
    ring.set(data.subarray(0, first), pos);
    if (first < data.byteLength) ring.set(data.subarray(first), 0);
  }

  /**
   * Chunks with `seq > afterSeq`. The first is returned whatever its size;
   * later ones stop before the total would exceed `maxBytes`. A chunk's
   * bytes may be a view of the ring: use them before the next append.
   */
  read(afterSeq: number, maxBytes: number = Infinity): OutputSlice {
    const first = this.firstSeq;
    const from = Math.max(afterSeq + 1, first);
    const chunks: OutputChunk[] = [];
    let total = 0;
    let i = this.#head + (from - first);
    for (; i < this.#entries.length; i++) {
      const e = this.#entries[i];
      if (chunks.length > 0 && total + e.length > maxBytes) break;
      chunks.push({ seq: e.seq, stream: e.stream, data: e.own ?? bytesOf(this.#ring, e) });
      total += e.length;
    }
    // Complete: no retained chunk is left beyond; then the next read starts
    // after every seq given out, reserved ones (reserveSeq) included.
    const complete = i >= this.#entries.length;
    const slice: OutputSlice = {
      chunks,
      nextSeq: complete ? this.#nextSeq : chunks[chunks.length - 1].seq + 1,
      complete,
    };
    if (afterSeq + 1 < first) slice.evicted = { fromSeq: afterSeq + 1, toSeq: first - 1 };
    return slice;
  }
}

/** An entry's bytes in `ring`: a view, or a copy when they wrap around. */
function bytesOf(ring: Uint8Array, e: Entry): Uint8Array {
  if (e.length === 0) return new Uint8Array(0);
  const pos = e.at % ring.length;
  if (pos + e.length <= ring.length) return ring.subarray(pos, pos + e.length);
  const out = new Uint8Array(e.length);
  const first = ring.length - pos;
  out.set(ring.subarray(pos));
  out.set(ring.subarray(0, e.length - first), first);
  return out;
}
