/**
 * `bootstrap.progress`: one line on stderr that follows an upload, for a
 * person watching a first connection take a while. On a terminal the line
 * is redrawn in place; elsewhere (a log file, a CI console) redrawing would
 * leave a mess, so the line is written when the upload starts and again,
 * complete, when it ends.
 *
 * @module
 */
import process from "node:process";
import type { BootstrapEvent } from "./options.ts";

/** Where the line goes, and whether it can be redrawn in place. */
export interface LineSink {
  /** Write text as it is. */
  write(text: string): void;
  /** True when `\r` returns to the line's start (a terminal). */
  redraw: boolean;
}

const MIB = 1024 * 1024;

/** Process stderr as a {@linkcode LineSink}. */
export function stderrSink(): LineSink {
  return {
    write: (text) => void process.stderr.write(text),
    redraw: process.stderr.isTTY === true,
  };
}

/**
 * Turns bootstrap events into the progress line about `host`.
 *
 * @example
 * ```ts
 * import { ProgressLine } from "./progress_line.ts";
 * let out = "";
 * const line = new ProgressLine("box", { write: (t) => out += t, redraw: false });
 * line.event({ kind: "upload", remotePath: "/r", target: "linux-x64", encoding: "gzip",
 *   wireBytes: 1048576, binaryBytes: 3145728, totalBytes: 1048576 });
 * line.event({ kind: "progress", remotePath: "/r", sentBytes: 1048576, totalBytes: 1048576 });
 * line.end();
 * // out ends with "exec-server: uploaded linux-x64 binary to box: 1.0/1.0 MiB (gzip, 3.0 MiB unpacked)\n"
 * ```
 */
export class ProgressLine {
  #host: string;
  #sink: LineSink;
  #upload: Extract<BootstrapEvent, { kind: "upload" }> | undefined;
  #sent = 0;
  #open = false;

  /**
   * @param host the ssh destination, as the line names it
   * @param sink where the line goes (default: stderr)
   */
  constructor(host: string, sink: LineSink = stderrSink()) {
    this.#host = host;
    this.#sink = sink;
  }

  /** Say that `target`'s binary is being compressed before it can be sent. */
  compressing(target: string, binaryBytes: number): void {
    this.#show(
      `exec-server: compressing ${target} binary for ${this.#host} (${mib(binaryBytes)} MiB)`,
    );
  }

  /** Follow one bootstrap event. */
  event(e: BootstrapEvent): void {
    if (e.kind === "upload") {
      this.#upload = e;
      this.#sent = 0;
      this.#show(this.#text("uploading"));
    } else if (e.kind === "progress" && this.#upload !== undefined) {
      this.#sent = e.sentBytes;
      if (this.#sink.redraw) this.#show(this.#text("uploading"));
    }
  }

  /** Finish the line: complete when every byte went out, else as far as it got. */
  end(): void {
    if (this.#upload !== undefined) {
      const done = this.#sent >= this.#upload.wireBytes;
      this.#show(this.#text(done ? "uploaded" : "uploading"));
      this.#upload = undefined;
    }
    if (this.#open && this.#sink.redraw) this.#sink.write("\n");
    this.#open = false;
  }

  #text(verb: string): string {
    const u = this.#upload!;
    const how = u.encoding === "gzip" ? `gzip, ${mib(u.binaryBytes)} MiB unpacked` : "uncompressed";
    return `exec-server: ${verb} ${u.target} binary to ${this.#host}: ` +
      `${mib(this.#sent)}/${mib(u.wireBytes)} MiB (${how})`;
  }

  /** Redraw the line on a terminal; elsewhere write it as a line of its own. */
  #show(text: string): void {
    if (this.#sink.redraw) {
      this.#sink.write(`\r${text}\x1b[K`);
      this.#open = true;
    } else {
      this.#sink.write(`${text}\n`);
    }
  }
}

function mib(bytes: number): string {
  return (bytes / MIB).toFixed(1);
}
