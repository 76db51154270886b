/**
 * The client's reader of the remote script's answers: lines on ssh's
 * stdout that start with a per-connection marker, among whatever a login
 * script prints, until the server itself takes over the stream.
 *
 * It is not the JSON-RPC `LineSplitter` of `src/rpc/line_splitter.ts`:
 * that one consumes every byte it is given, while the bytes after the
 * `ready` line belong to the server and must be handed on untouched; and
 * its size limit is per line, while login chatter is limited here in
 * total, across lines.
 *
 * @module
 */
import { concatBytes } from "../../util/bytes.ts";

/** One answer of the remote script: its words, and all but the first joined again. */
export type Answer = { words: string[]; rest: string };

const MAX_NOISE_BYTES = 64 * 1024;
const decoder = new TextDecoder();

/**
 * Reads the lines that start with `marker` from a byte stream, skipping
 * anything else (a login script's chatter), then hands the rest on.
 *
 * @example
 * ```ts
 * import { MarkedLines } from "./lines.ts";
 * const stdout = ReadableStream.from([new TextEncoder().encode("motd\nM ready cached /x\n")]);
 * const lines = new MarkedLines(stdout, "M");
 * await lines.next(); // { words: ["ready", "cached", "/x"], rest: "cached /x" }
 * ```
 */
export class MarkedLines {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #prefix: string;
  #buffer: Uint8Array = new Uint8Array(0);
  #skipped = 0;

  /**
   * @param stream the remote's stdout; this reader locks it
   * @param marker what the script's lines start with (followed by a space)
   */
  constructor(stream: ReadableStream<Uint8Array>, marker: string) {
    this.#reader = stream.getReader();
    this.#prefix = `${marker} `;
  }

  /**
   * The next marked line split into words (and all but the first joined), or null at the end.
   *
   * @throws {Error} once more than 64 KiB of unmarked output has been skipped
   */
  async next(): Promise<Answer | null> {
    while (true) {
      const nl = this.#buffer.indexOf(0x0a);
      if (nl >= 0) {
        const line = decoder.decode(this.#buffer.subarray(0, nl));
        this.#buffer = this.#buffer.slice(nl + 1);
        // Chatter without a final newline may precede the marker on its line.
        const at = line.indexOf(this.#prefix);
        if (at >= 0) {
          const text = line.slice(at + this.#prefix.length);
          const words = text.split(" ");
          return { words, rest: words.slice(1).join(" ") };
        }
        this.#skipped += nl + 1;
      }
      if (this.#skipped + this.#buffer.byteLength > MAX_NOISE_BYTES) {
        throw new Error(`more than ${MAX_NOISE_BYTES} bytes of unexpected output on stdout`);
      }
      if (nl >= 0) continue;
      const { done, value } = await this.#reader.read();
      if (done) return null;
      // Two parts, so always a fresh copy: the stream may reuse `value`.
      this.#buffer = concatBytes([this.#buffer, value]);
    }
  }

  /** The rest of the stream: what was read past the last marked line, then everything after. */
  rest(): ReadableStream<Uint8Array> {
    const reader = this.#reader;
    const leftover = this.#buffer;
    return new ReadableStream<Uint8Array>({
      start(controller) {
        if (leftover.byteLength > 0) controller.enqueue(leftover);
      },
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
  }
}
