/**
 * An end marker written behind a child's output, so that reading it back
 * proves everything written before it has been read. A terminal delivers
 * bytes in the order they were written, so the marker fences the output
 * exactly, however late the event loop gets round to reading.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { writeSync } from "node:fs";

/** How far {@linkcode OutputFence.push} got. */
export type FencePush =
  /** The whole marker is in the terminal: it will come out of the master. */
  | "written"
  /** The terminal takes no more for now (full, or its output stopped). */
  | "blocked"
  /** The write failed for good: the output cannot be fenced. */
  | "failed";

/** What {@linkcode OutputFence.scan} found in a chunk of output. */
export interface FenceScan {
  /** Output that is certainly not part of the marker, if any. */
  output: Uint8Array | undefined;
  /** Whether the marker came out: nothing after it belongs to the child. */
  found: boolean;
}

/** Writes `length` bytes at `offset`; returns the count written (see {@linkcode OutputFence}). */
export type FenceWrite = (fd: number, data: Uint8Array, offset: number, length: number) => number;

/**
 * A random end marker for one terminal: written into the slave side, found
 * again in what the master side reads.
 *
 * The marker is an escape sequence of digits and upper-case letters, which
 * no output post-processing (ONLCR, OLCUC) changes, and random, so a child
 * cannot print it by chance or on purpose.
 *
 * @example
 * ```ts
 * import { OutputFence } from "./output_fence.ts";
 * declare const slaveFd: number;
 * const fence = new OutputFence(slaveFd);
 * if (fence.push() === "written") {
 *   const { output, found } = fence.scan(new TextEncoder().encode("tail"));
 *   console.log(output, found);
 * }
 * ```
 */
export class OutputFence {
  /** The marker's bytes. */
  readonly marker: Buffer = Buffer.from(
    `\x1b[${randomHex(12).toUpperCase()}Z`,
  );
  #fd: number;
  #write: FenceWrite;
  #written = 0;
  /** Bytes held back because they might be the start of the marker. */
  #carry: Buffer | undefined;

  /**
   * @param fd the terminal's slave side, opened with O_NONBLOCK
   * @param write the write call; a non-blocking `fs.writeSync` by default
   */
  constructor(fd: number, write: FenceWrite = writeSync) {
    this.#fd = fd;
    this.#write = write;
  }

  /** How many of the marker's bytes are in the terminal. */
  get written(): number {
    return this.#written;
  }

  /**
   * Write what is left of the marker without ever blocking. The fd is
   * non-blocking, so each call returns at once; writing one byte per call
   * keeps the count exact where a runtime reports EAGAIN after a partial
   * write without its count (Deno). Synchronous on purpose: 27 non-blocking
   * writes once per exit cost less than 27 trips through a thread pool
   * that may be busy with the very work that delays the read.
   */
  push(): FencePush {
    while (this.#written < this.marker.length) {
      try {
        this.#written += this.#write(this.#fd, this.marker, this.#written, 1);
      } catch (err) {
        const code = (err as { code?: string }).code;
        return code === "EAGAIN" || code === "EWOULDBLOCK" ? "blocked" : "failed";
      }
    }
    return "written";
  }

  /**
   * Look for the marker in the next chunk read from the master. All but a
   * tail that could be the marker's beginning is returned as output.
   */
  scan(chunk: Uint8Array): FenceScan {
    const data = this.#carry
      ? Buffer.concat([this.#carry, chunk])
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#carry = undefined;
    const at = data.indexOf(this.marker);
    if (at >= 0) return { output: at > 0 ? data.subarray(0, at) : undefined, found: true };
    const keep = Math.min(data.length, this.marker.length - 1);
    if (keep > 0) this.#carry = Buffer.from(data.subarray(data.length - keep));
    return {
      output: data.length > keep ? data.subarray(0, data.length - keep) : undefined,
      found: false,
    };
  }

  /** What was held back, now known to be output (the marker never came). */
  takeCarry(): Uint8Array | undefined {
    const carry = this.#carry;
    this.#carry = undefined;
    return carry && carry.length > 0 ? carry : undefined;
  }
}

/** `bytes` random bytes as hex, from Web Crypto (node:crypto costs a server's start time). */
function randomHex(bytes: number): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
}
