/**
 * An output queue for newline-framed messages: frames sent in the same turn
 * are written in one batch, and the queued size drives backpressure.
 *
 * @module
 */
import { type Base64Part, BinaryFrame, type OutgoingFrame } from "../rpc/connection.ts";
import { encodeBase64 } from "../protocol/base64.ts";
import { WaterMarks } from "../util/water_marks.ts";

/** Options of {@linkcode FrameWriter}. */
export interface FrameWriterOptions {
  /** Above this many queued bytes, `send` returns false. */
  highWaterBytes?: number;
  /** `onDrain` listeners run once the queue is at or below this. */
  lowWaterBytes?: number;
  /**
   * Reuse written blocks. Only safe when the stream's `write()` resolves
   * after the bytes were written out (Deno's stdout), not when it resolves
   * as soon as they were queued (Node's `toWeb`).
   */
  reuseBuffer?: boolean;
}

/**
 * Frames are encoded into blocks of this size; one block is one write. Big
 * enough that a write carries many output notifications (~87 KiB each).
 */
const BLOCK_BYTES = 1 << 20;

/** The smallest block made when blocks are not reused: a few small frames share one. */
const MIN_BLOCK_BYTES = 4096;

/** A block of encoded frames. */
interface Block {
  bytes: Uint8Array;
  used: number;
}

/**
 * A big {@linkcode Base64Part} in the queue, encoded a block at a time as
 * it is written: `offset` bytes of it are written so far.
 */
interface LazyBase64 {
  lazy: Uint8Array;
  offset: number;
}

/**
 * Base64 parts with a text up to a block long are encoded at once, like
 * text: kept until written, their bytes (a streamed read's 512 KiB pieces)
 * outlived Node's young generation, and the binary's RSS grew 62 MiB over
 * a 1 GiB download against 3 MiB encoded at once.
 */
const EAGER_BASE64_CHARS = BLOCK_BYTES;

/**
 * Bytes encoded per call when filling a block from a lazy part: 64 KiB of
 * text, a string small enough for the young generation (a string of the
 * whole part took three times as long, most of it spent allocating it).
 */
const BASE64_PIECE_BYTES = 48 * 1024;

/**
 * Queues text frames and writes them as `\n`-terminated UTF-8, and
 * **[ext]** binary frames as their header line and raw payload.
 *
 * Each frame is encoded into a byte block the moment it is sent, and the
 * string is dropped: queued output is bytes in a few reused blocks, not
 * strings that outlive the young generation and pile up in the old one
 * until a full collection (queued notification strings held the server's
 * heap at ~100 MiB under full-speed output; now the heap stays small).
 */
export class FrameWriter {
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #blocks: (Block | LazyBase64)[] = [];
  #spare: Uint8Array[] = [];
  #queuedBytes = 0;
  #inFlightBytes = 0;
  #scheduled = false;
  #writing = false;
  #marks: WaterMarks;
  #idle: (() => void)[] = [];
  #failed: unknown;
  #encoder = new TextEncoder();
  #reuse: boolean;
  /**
   * Written blocks kept for reuse: as many as a queue at its high-water mark
   * holds, so a connection that keeps congesting allocates no more blocks
   * (dropped ones had left tens of megabytes for the collector).
   */
  #maxSpare: number;

  /** Write to `writable`, which this writer locks. */
  constructor(writable: WritableStream<Uint8Array>, opts: FrameWriterOptions = {}) {
    this.#writer = writable.getWriter();
    this.#marks = new WaterMarks(opts);
    this.#reuse = opts.reuseBuffer ?? false;
    this.#maxSpare = Math.ceil(this.#marks.high / BLOCK_BYTES) + 2;
  }

  /** Bytes queued or being written. */
  get bufferedBytes(): number {
    return this.#queuedBytes + this.#inFlightBytes;
  }

  /**
   * Queue a frame (its text, or its parts, which are encoded one after the
   * other without being joined); false when the queue is above its
   * high-water mark.
   */
  send(frame: OutgoingFrame): boolean {
    if (this.#failed !== undefined) return false;
    if (frame instanceof BinaryFrame) {
      // The header ends in its newline; the next message follows the payload.
      this.#append(frame.header());
      this.#appendBytes(frame.bytes);
    } else {
      if (typeof frame === "string") {
        this.#append(frame);
      } else {
        for (const part of frame) {
          if (typeof part === "string") this.#append(part);
          else if (part.textLength <= EAGER_BASE64_CHARS) this.#append(part.toString());
          else this.#appendLazy(part);
        }
      }
      const block = this.#openBlock(1, 1);
      block.bytes[block.used++] = 0x0a;
      this.#queuedBytes++;
    }
    if (!this.#scheduled && !this.#writing) {
      this.#scheduled = true;
      queueMicrotask(() => this.#pump());
    }
    return this.#marks.grew(this.bufferedBytes);
  }

  /**
   * Queue bytes that are already whole frames on the wire (a relay passes
   * another server's output on this way); false above the high-water mark.
   */
  sendBytes(bytes: Uint8Array): boolean {
    if (this.#failed !== undefined) return false;
    this.#appendBytes(bytes);
    if (!this.#scheduled && !this.#writing) {
      this.#scheduled = true;
      queueMicrotask(() => this.#pump());
    }
    return this.#marks.grew(this.bufferedBytes);
  }

  /** Encode `text` into the open block, opening more as needed. */
  #append(text: string): void {
    let rest = text;
    while (rest.length > 0) {
      // Room for any one UTF-8 character; ASCII text and its newline wanted.
      const block = this.#openBlock(4, rest.length + 1);
      const { read, written } = this.#encoder.encodeInto(rest, block.bytes.subarray(block.used));
      block.used += written;
      this.#queuedBytes += written;
      // The rest of a frame larger than the block goes on in the next one.
      rest = read === rest.length ? "" : rest.slice(read);
    }
  }

  /**
   * Copy raw bytes into the open block, opening more as needed: a copy
   * costs little beside the write, and the caller may reuse its bytes.
   */
  #appendBytes(bytes: Uint8Array): void {
    let at = 0;
    while (at < bytes.byteLength) {
      const block = this.#openBlock(1, bytes.byteLength - at);
      const n = Math.min(block.bytes.length - block.used, bytes.byteLength - at);
      block.bytes.set(bytes.subarray(at, at + n), block.used);
      block.used += n;
      this.#queuedBytes += n;
      at += n;
    }
  }

  /** Queue a big base64 part to be encoded as it is written. */
  #appendLazy(part: Base64Part): void {
    this.#blocks.push({ lazy: part.bytes, offset: 0 });
    this.#queuedBytes += part.textLength;
  }

  /**
   * The last block if it has `room` bytes free, else a new one: a spare, a
   * full-size one when blocks are reused, or else one for about `want`
   * bytes (a client's small requests must not cost a megabyte each).
   */
  #openBlock(room: number, want: number): Block {
    const last = this.#blocks[this.#blocks.length - 1];
    if (last && "bytes" in last && last.bytes.length - last.used >= room) return last;
    const size = this.#reuse ? BLOCK_BYTES : Math.min(BLOCK_BYTES, Math.max(MIN_BLOCK_BYTES, want));
    const block = { bytes: this.#spare.pop() ?? new Uint8Array(size), used: 0 };
    this.#blocks.push(block);
    return block;
  }

  /** Call `listener` each time a congested queue drains. */
  onDrain(listener: () => void): void {
    this.#marks.onDrain(listener);
  }

  /** Resolves once everything queued so far has been written. */
  flushed(): Promise<void> {
    if (!this.#writing && !this.#scheduled && this.#blocks.length === 0) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Flush, then close the underlying stream. */
  async close(): Promise<void> {
    await this.flushed();
    try {
      await this.#writer.close();
    } catch {
      // The other side is already gone.
    }
  }

  /** A block filled with the next stretch of the first entry, a lazy part. */
  #fillFromLazy(): Block {
    const entry = this.#blocks[0] as LazyBase64;
    const bytes = this.#spare.pop() ?? new Uint8Array(BLOCK_BYTES);
    let used = 0;
    // Whole pieces of 3 bytes until the last: base64 padding only at the end.
    while (
      entry.offset < entry.lazy.byteLength && bytes.length - used >= BASE64_PIECE_BYTES / 3 * 4
    ) {
      const end = Math.min(entry.offset + BASE64_PIECE_BYTES, entry.lazy.byteLength);
      const text = encodeBase64(entry.lazy.subarray(entry.offset, end));
      used += this.#encoder.encodeInto(text, bytes.subarray(used)).written;
      entry.offset = end;
    }
    if (entry.offset >= entry.lazy.byteLength) this.#blocks.shift();
    return { bytes, used };
  }

  async #pump(): Promise<void> {
    this.#scheduled = false;
    this.#writing = true;
    while (this.#blocks.length > 0 && this.#failed === undefined) {
      // Taking the block closes it: frames sent during the write go on in
      // a new block, so the bytes being written never change under it. A
      // lazy part stays first until its last piece is taken.
      const block = "lazy" in this.#blocks[0]
        ? this.#fillFromLazy()
        : this.#blocks.shift() as Block;
      this.#queuedBytes -= block.used;
      this.#inFlightBytes = block.used;
      try {
        await this.#writer.write(block.bytes.subarray(0, block.used));
      } catch (err) {
        this.#failed = err;
      }
      // Only a write that resolves once written lets the block be reused.
      if (this.#reuse && this.#spare.length < this.#maxSpare) this.#spare.push(block.bytes);
      this.#inFlightBytes = 0;
      this.#marks.shrank(this.bufferedBytes);
    }
    if (this.#failed !== undefined) {
      this.#blocks = [];
      this.#queuedBytes = 0;
    }
    this.#writing = false;
    const idle = this.#idle;
    this.#idle = [];
    for (const r of idle) r();
  }
}
