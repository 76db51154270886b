/**
 * The unread output of one command, bounded: its first and last bytes are
 * kept and the middle is counted, so a command that prints gigabytes costs
 * a fixed amount of memory and the model still sees how it started and how
 * it ended. A read takes everything unread, cut again to the caller's cap.
 *
 * @module
 */
import { concatBytes } from "../util/bytes.ts";

/** What one read returns. */
export interface WindowRead {
  /** The output as UTF-8 text, with a marker where bytes were left out. */
  text: string;
  /** Bytes of this read's output that are not in `text`. */
  omittedBytes: number;
  /** Bytes the output held in all, `text` and omitted together. */
  totalBytes: number;
}

/** Default size of the kept head and of the kept tail (512 KiB each). */
export const DEFAULT_KEEP_BYTES = 512 * 1024;

/**
 * Unread output with a bounded head and tail.
 *
 * @example
 * ```ts
 * import { OutputWindow } from "./output_window.ts";
 * const w = new OutputWindow(4);
 * w.push(new TextEncoder().encode("0123456789"));
 * const r = w.read(100);
 * r.text; // "0123\n[... 2 bytes omitted ...]\n6789"
 * ```
 */
export class OutputWindow {
  /** How many bytes of the head, and of the tail, are kept. */
  readonly keepBytes: number;
  #head: Uint8Array[] = [];
  #headBytes = 0;
  #tail: Uint8Array[] = [];
  #tailBytes = 0;
  #omitted = 0;

  /** @param keepBytes bytes kept at each end (at least 4) */
  constructor(keepBytes: number = DEFAULT_KEEP_BYTES) {
    if (!Number.isInteger(keepBytes) || keepBytes < 4) {
      throw new RangeError(`keepBytes must be an integer of at least 4, got ${keepBytes}`);
    }
    this.keepBytes = keepBytes;
  }

  /** Bytes unread: kept and omitted. */
  get size(): number {
    return this.#headBytes + this.#omitted + this.#tailBytes;
  }

  /** Add output at the end. */
  push(bytes: Uint8Array): void {
    let rest = bytes;
    const headRoom = this.keepBytes - this.#headBytes;
    if (headRoom > 0 && this.#omitted === 0 && this.#tailBytes === 0) {
      const part = rest.subarray(0, headRoom);
      this.#head.push(part.slice());
      this.#headBytes += part.length;
      rest = rest.subarray(part.length);
    }
    if (rest.length === 0) return;
    this.#tail.push(rest.slice());
    this.#tailBytes += rest.length;
    this.#trimTail();
  }

  /**
   * Take everything unread, at most `capBytes` of it in `text` (half from
   * the start, half from the end, cut at character boundaries); the window
   * is empty afterwards.
   */
  read(capBytes: number): WindowRead {
    const head = concatBytes(this.#head, this.#headBytes);
    const tail = concatBytes(this.#tail, this.#tailBytes);
    const totalBytes = this.size;
    let omitted = this.#omitted;
    this.#head = [];
    this.#tail = [];
    this.#headBytes = this.#tailBytes = this.#omitted = 0;
    if (omitted === 0 && head.length + tail.length <= capBytes) {
      return { text: decode(join(head, tail)), omittedBytes: 0, totalBytes };
    }
    const whole = omitted === 0 ? join(head, tail) : undefined;
    const front = whole ?? head;
    const back = whole ?? tail;
    const headEnd = charBoundaryBefore(front, Math.min(front.length, Math.ceil(capBytes / 2)));
    const keepBack = Math.min(back.length, Math.floor(capBytes / 2));
    const tailStart = charBoundaryAfter(back, back.length - keepBack);
    if (whole) {
      omitted = Math.max(0, tailStart - headEnd);
      if (omitted === 0) return { text: decode(whole), omittedBytes: 0, totalBytes };
    } else {
      omitted += head.length - headEnd + tailStart;
    }
    const text = decode(front.subarray(0, headEnd)) +
      `\n[... ${omitted} bytes omitted ...]\n` + decode(back.subarray(tailStart));
    return { text, omittedBytes: omitted, totalBytes };
  }

  /** Drop tail chunks (or their starts) beyond `keepBytes`, counting them as omitted. */
  #trimTail(): void {
    while (this.#tailBytes > this.keepBytes) {
      const first = this.#tail[0];
      const excess = this.#tailBytes - this.keepBytes;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailBytes -= first.length;
        this.#omitted += first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailBytes -= excess;
        this.#omitted += excess;
      }
    }
  }
}

const decoder = new TextDecoder();

function decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

function join(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  return concatBytes([a, b]);
}

/** The largest index ≤ `at` that does not split a UTF-8 character. */
function charBoundaryBefore(bytes: Uint8Array, at: number): number {
  let i = at;
  // Continuation bytes are 10xxxxxx; step back at most three of them.
  while (i > 0 && i < bytes.length && i > at - 4 && (bytes[i] & 0xc0) === 0x80) i--;
  return i;
}

/** The smallest index ≥ `at` that does not split a UTF-8 character. */
function charBoundaryAfter(bytes: Uint8Array, at: number): number {
  let i = at;
  while (i < bytes.length && i < at + 4 && (bytes[i] & 0xc0) === 0x80) i++;
  return i;
}
