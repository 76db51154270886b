/**
 * Reused buffers for binary frames' payloads.
 *
 * An upload moves as 1 MiB payloads, each a buffer of its own that is dead
 * once written to the file. Left to the collector, a 1 GiB upload leaves
 * 1 GiB of dead buffers behind, outside the JavaScript heap, and V8 lets
 * ~64 MiB of them pile up before it looks; the forced collections that kept
 * the server's memory bounded instead were a fifth of its time (two full
 * collections each, ~15 ms per 32 MiB written, on this project's 2-core
 * machines). A payload whose consumer says when it is done with it goes
 * back to a pool and carries the next one: no garbage, no collection, and
 * no fresh pages to fault in. A payload that arrived in a buffer of its
 * own (a websocket message, which the runtime allocates) cannot carry the
 * next one, but is freed the moment it is given back: the buffer is
 * detached (`ArrayBuffer.prototype.transfer`), which releases its memory
 * without waiting for a collection.
 *
 * @module
 */

/** The size of a pooled buffer: the client library's upload piece. */
export const PAYLOAD_SLOT_BYTES = 1024 * 1024;

/** Free buffers kept at most: the client library's window of 4 pieces, twice over. */
export const PAYLOAD_SLOTS_KEPT = 8;

/**
 * A pool of equal buffers for payloads of up to `slotBytes`. A taken
 * payload is a view of the start of a buffer; given back, the buffer is
 * kept for the next one (up to `keep` of them), and anything the pool did
 * not hand out is refused, so a caller cannot pool a buffer that someone
 * else still holds.
 *
 * @example
 * ```ts
 * import { PayloadPool } from "./payload_pool.ts";
 * const pool = new PayloadPool(1024, 2);
 * const a = pool.take(100); // a view of 100 bytes of a 1024-byte buffer
 * pool.give(a); // true: its buffer carries the next payload
 * pool.give(new Uint8Array(100)); // false: not the pool's
 * ```
 */
export class PayloadPool {
  readonly #slotBytes: number;
  readonly #keep: number;
  readonly #free: ArrayBuffer[] = [];
  /** Every buffer handed out and not yet given back. */
  readonly #out = new WeakSet<ArrayBuffer>();
  /** Buffers handed over by {@linkcode PayloadPool.adopt}, to be freed when given back. */
  readonly #adopted = new WeakSet<ArrayBuffer>();

  /**
   * @param slotBytes the size of each buffer, and the largest payload pooled
   * @param keep free buffers kept at most; more are left to the collector
   */
  constructor(slotBytes: number = PAYLOAD_SLOT_BYTES, keep: number = PAYLOAD_SLOTS_KEPT) {
    this.#slotBytes = slotBytes;
    this.#keep = keep;
  }

  /**
   * A buffer of `bytes` for a payload: from the pool when it fits a slot,
   * else a new one. Its contents are whatever was there: the caller fills
   * it whole before anyone reads it.
   */
  take(bytes: number): Uint8Array {
    if (bytes > this.#slotBytes || bytes === 0) return new Uint8Array(bytes);
    const buffer = this.#free.pop() ?? new ArrayBuffer(this.#slotBytes);
    this.#out.add(buffer);
    return new Uint8Array(buffer, 0, bytes);
  }

  /**
   * Hand over `buffer`, which holds a payload and which nothing else holds
   * or will hold (a websocket message's own buffer): once the payload is
   * given back, the buffer is freed at once instead of by the collector.
   * Returns false, adopting nothing, where the runtime cannot free a buffer
   * early (Node 20 has no `ArrayBuffer.prototype.transfer`).
   */
  adopt(buffer: ArrayBuffer): boolean {
    if (!CAN_DETACH) return false;
    this.#adopted.add(buffer);
    return true;
  }

  /**
   * The consumer is done with `payload`, which nothing may read or write
   * any more. Returns whether the pool took care of its buffer: kept for
   * the next payload, or, adopted, freed. False (one the pool never handed
   * out nor adopted, one given twice, one more than it keeps, or a runtime
   * that cannot detach) leaves it to the collector.
   */
  give(payload: Uint8Array): boolean {
    const buffer = payload.buffer;
    if (!(buffer instanceof ArrayBuffer)) return false;
    if (this.#adopted.delete(buffer)) {
      // Only adopted where the runtime can detach (adopt).
      transfer!.call(buffer, 0);
      return true;
    }
    if (!this.#out.has(buffer)) return false;
    this.#out.delete(buffer);
    if (this.#free.length >= this.#keep) return false;
    this.#free.push(buffer);
    return true;
  }

  /** Free buffers held now (for tests and memory figures). */
  get freeSlots(): number {
    return this.#free.length;
  }
}

type Transfer = (this: ArrayBuffer, length: number) => ArrayBuffer;

/** `ArrayBuffer.prototype.transfer`, where the runtime has it. */
const transfer = (ArrayBuffer.prototype as { transfer?: Transfer }).transfer;
/**
 * Whether a buffer's memory can be freed early: detached by `transfer(0)`,
 * which leaves an empty buffer in its place.
 */
const CAN_DETACH = typeof transfer === "function";

/**
 * The process's one pool: the splitters of every connection take from it,
 * websocket connections hand it their messages' buffers, and the server's
 * `fs/writeFile` gives back what it has written.
 */
export const payloadPool: PayloadPool = new PayloadPool();
