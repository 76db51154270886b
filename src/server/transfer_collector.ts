/**
 * Keeps a bulk transfer from growing the server's memory. Every megabyte
 * written through `fs/writeFile` leaves a few megabytes of dead buffers
 * behind (the request line, its decoded text, the base64 string, the
 * decoded bytes), most of them outside the JavaScript heap; a read leaves
 * fewer (the bytes read, the base64 and the answer's text). V8 collects
 * them only once about 64 MiB more have piled up, and the allocator keeps
 * the high-water mark: streaming 1 GiB in 256 KiB requests grew the
 * server's RSS by ~110 MiB up and ~70 MiB down (Deno 2.9). A full
 * collection after every 32 MiB written or 64 MiB read keeps both under
 * 45 MiB, for about 15 ms each (~0.5 s of server CPU per GiB written,
 * against ~7 s for the rest of the upload). Collecting twice as often
 * gained little memory and cost up to a third of the throughput.
 * Binary frames' payloads that the payload pool (`rpc/payload_pool.ts`)
 * takes care of leave no garbage and are not counted: pooled pieces of an
 * upload over stdio, and buffers freed at once (websocket messages, reads
 * sent as binary frames) where the runtime can detach them.
 *
 * @module
 */
import { clearTimeout, setTimeout } from "node:timers";
import { collectGarbage } from "../runtime/gc.ts";

/** File bytes written between two collections by default: 32 MiB (or twice that read). */
export const TRANSFER_COLLECT_BYTES: number = 32 * 1024 * 1024;

/** Settings of a {@linkcode TransferCollector}. */
export interface TransferCollectorOptions {
  /** Bytes moved that make a collection worth it. */
  everyBytes: number;
  /** The collection itself; returns whether it ran. */
  collect: () => boolean;
}

/**
 * Counts file bytes written (and, at half weight, read) and runs one
 * collection after every `everyBytes`, on a timer of its own so that the
 * answer that crossed the line is sent (and its buffers are dead) first.
 *
 * @example
 * ```ts
 * import { TransferCollector } from "./transfer_collector.ts";
 * const c = new TransferCollector({ everyBytes: 1024, collect: () => true });
 * c.wrote(4096); // a collection is scheduled
 * c.stop();
 * ```
 */
export class TransferCollector {
  #opts: TransferCollectorOptions;
  #bytes = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** @param opts when to collect, and how */
  constructor(opts: TransferCollectorOptions) {
    this.#opts = opts;
  }

  /** `bytes` of file data were read: they count half, leaving less garbage. */
  read(bytes: number): void {
    this.#add(bytes / 2);
  }

  /** `bytes` of file data were written. */
  wrote(bytes: number): void {
    this.#add(bytes);
  }

  #add(bytes: number): void {
    this.#bytes += bytes;
    if (this.#bytes < this.#opts.everyBytes || this.#timer !== undefined) return;
    this.#bytes = 0;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#opts.collect();
    }, 0);
    // A pending collection must never keep a finished server alive.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Cancel a pending collection. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The server's one collector: the heap is the process's, whichever
 * session moves the bytes.
 */
export const transferCollector: TransferCollector = new TransferCollector({
  everyBytes: TRANSFER_COLLECT_BYTES,
  collect: collectGarbage,
});
