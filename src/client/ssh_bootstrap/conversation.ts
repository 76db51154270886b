/**
 * The client's half of the conversation with the remote bootstrap script:
 * send the script, read its answers, upload the binary when it asks, and
 * turn every failure the script reports into a {@linkcode BootstrapError}
 * that says what to do about it. Only the answers are timed; the upload is
 * not, since a slow link cannot be told from a stuck remote until the
 * remote says it has every byte.
 *
 * @module
 */
import { open } from "node:fs/promises";
import { deadline, within } from "../../util/deadline.ts";
import type { LocalBinary } from "./cache.ts";
import { BootstrapError } from "./errors.ts";
import { type Answer, MarkedLines } from "./lines.ts";
import type { SshBootstrapOptions } from "./options.ts";
import { type BinaryPlatform, describePlatforms } from "./platform.ts";

const UPLOAD_CHUNK_BYTES = 1 << 20;

/**
 * The client's half of the conversation with the remote script, for one
 * connection. `remotePath` and `uploaded` are known once {@linkcode run}
 * resolves.
 *
 * @example
 * ```ts
 * import { BootstrapSession } from "./conversation.ts";
 * import { describeLocalBinary } from "./cache.ts";
 * declare const stdio: { stdout: ReadableStream<Uint8Array>; stdin: WritableStream<Uint8Array> };
 * declare const script: Uint8Array;
 * const local = await describeLocalBinary("dist/exec-server");
 * const session = new BootstrapSession("me@pi", local, "M", { localBinary: local.path }, undefined);
 * const serverOutput = await session.run(script, stdio.stdout, stdio.stdin, () =>
 *   Promise.resolve(undefined));
 * console.log(session.remotePath, session.uploaded, serverOutput);
 * ```
 */
export class BootstrapSession {
  /** The binary's path on the remote, once the script has named it. */
  remotePath: string | undefined;
  /** Whether this connection uploaded the binary (false: the cached copy was valid). */
  uploaded = false;
  #host: string;
  #local: LocalBinary;
  #marker: string;
  #opts: SshBootstrapOptions;
  #platforms: BinaryPlatform[] | undefined;
  #timeoutMs: number;

  /**
   * @param host the ssh destination, for error messages
   * @param local the binary to run remotely
   * @param marker what the script's lines for the client start with
   * @param opts the `bootstrap` option, for the timeout, `onProgress` and messages
   * @param platforms the platforms the script checks for, for messages
   */
  constructor(
    host: string,
    local: LocalBinary,
    marker: string,
    opts: SshBootstrapOptions,
    platforms: BinaryPlatform[] | undefined,
  ) {
    this.#host = host;
    this.#local = local;
    this.#marker = marker;
    this.#opts = opts;
    this.#platforms = platforms;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /**
   * Send `script` to the remote and follow it until it `exec`s the server.
   * Resolves to the server's output: the rest of `stdout`.
   *
   * @param script the bootstrap script, exactly the bytes the remote command reads
   * @param stdout ssh's stdout
   * @param stdin ssh's stdin; its lock is released once the server runs
   * @param explainEnd why ssh ended, for messages
   * @throws {BootstrapError} when any stage fails
   */
  async run(
    script: Uint8Array,
    stdout: ReadableStream<Uint8Array>,
    stdin: WritableStream<Uint8Array>,
    explainEnd: () => Promise<string | undefined>,
  ): Promise<ReadableStream<Uint8Array>> {
    const lines = new MarkedLines(stdout, this.#marker);
    const writer = stdin.getWriter();
    // A failed write means the remote is gone; the answer (or its absence) says why.
    writer.write(script).catch(() => {});
    let answer = await this.#answer(lines, explainEnd, "the remote script's first answer");
    if (answer.words[0] === "upload") {
      this.remotePath = answer.rest;
      answer = await this.#upload(lines, writer, explainEnd);
    }
    if (answer.words[0] !== "ready") throw this.#unexpected(answer);
    this.remotePath = answer.words.slice(2).join(" ");
    this.uploaded = answer.words[1] === "uploaded";
    this.#opts.onProgress?.({
      kind: "ready",
      remotePath: this.remotePath,
      uploaded: this.uploaded,
    });
    writer.releaseLock();
    return lines.rest();
  }

  async #upload(
    lines: MarkedLines,
    writer: WritableStreamDefaultWriter<Uint8Array>,
    explainEnd: () => Promise<string | undefined>,
  ): Promise<Answer> {
    const remotePath = this.remotePath!;
    const totalBytes = this.#local.size;
    this.#opts.onProgress?.({ kind: "upload", remotePath, totalBytes });
    let stop = false;
    const sent = this.#send(writer, () => stop, (sentBytes) => {
      this.#opts.onProgress?.({ kind: "progress", remotePath, sentBytes, totalBytes });
    });
    const early = lines.next();
    // A local failure (unreadable file, a throwing onProgress) rejects the race as it is.
    const first = await Promise.race([
      sent.then((writeError) => ({ writeError })),
      early.then((line) => ({ line }), (err: unknown) => ({ line: err as Error })),
    ]).finally(() => stop = true);
    let received: Answer;
    if ("line" in first) {
      // The remote's answer decides now, whatever becomes of the last write.
      sent.catch(() => {});
      // The remote answered before the last write returned: `received`, when
      // the pipe took the tail but told us late; else an error, or nonsense.
      received = await this.#check(first.line, explainEnd, "the upload was complete");
    } else if (first.writeError !== undefined) {
      // The remote went away; its last words, if any, say why.
      const line = await within(early.catch(() => null), 2000);
      if (!line) throw await this.#ended(explainEnd, "the upload was complete", first.writeError);
      received = await this.#check(line, explainEnd, "the upload was complete");
    } else {
      // Every byte is in ssh's hands, but on a slow link much of it may
      // still be on the way: no timer until the remote says it has it all.
      // ssh ending (a dead connection) still ends the wait.
      received = await this.#check(
        await early.catch((err: Error) => err),
        explainEnd,
        "the upload was complete",
      );
    }
    if (received.words[0] !== "received") throw this.#unexpected(received);
    return this.#answer(lines, explainEnd, "the remote's check of the upload");
  }

  /** Send the binary; resolves to the write error when the remote stops reading, else undefined. */
  async #send(
    writer: WritableStreamDefaultWriter<Uint8Array>,
    stopped: () => boolean,
    progress: (sentBytes: number) => void,
  ): Promise<unknown> {
    const { path, size } = this.#local;
    const file = await open(path, "r");
    try {
      let sent = 0;
      while (sent < size && !stopped()) {
        const chunk = new Uint8Array(Math.min(UPLOAD_CHUNK_BYTES, size - sent));
        const { bytesRead } = await file.read(chunk, 0, chunk.byteLength, sent);
        if (bytesRead === 0) {
          throw new BootstrapError(
            this.#host,
            "local",
            `${path} shrank while it was uploaded (was ${size} bytes)`,
            { remotePath: this.remotePath },
          );
        }
        try {
          await writer.write(chunk.subarray(0, bytesRead));
        } catch (err) {
          return err ?? new Error("write failed");
        }
        sent += bytesRead;
        progress(sent);
      }
      return undefined;
    } finally {
      await file.close();
    }
  }

  /** The next marked line, within the timeout; errors and the end become BootstrapErrors. */
  async #answer(
    lines: MarkedLines,
    explainEnd: () => Promise<string | undefined>,
    what: string,
  ): Promise<Answer> {
    const line = await deadline(
      lines.next().catch((err: Error) => err),
      this.#timeoutMs,
      () =>
        new BootstrapError(
          this.#host,
          "timeout",
          `waited ${this.#timeoutMs} ms for ${what} (bootstrap.timeoutMs)`,
          { remotePath: this.remotePath },
        ),
    );
    return this.#check(line, explainEnd, what);
  }

  /** `line` unless it is an error or the end (`null`, which came before `awaited`). */
  async #check(
    line: Answer | null | Error,
    explainEnd: () => Promise<string | undefined>,
    awaited: string,
  ): Promise<Answer> {
    if (line === null) throw await this.#ended(explainEnd, awaited);
    if (line instanceof Error) {
      throw new BootstrapError(this.#host, "protocol", line.message, {
        remotePath: this.remotePath,
        cause: line,
      });
    }
    if (line.words[0] !== "error") return line;
    const [, kind = "", ...rest] = line.words;
    const detail = rest.join(" ");
    const at = { remotePath: this.remotePath };
    switch (kind) {
      case "platform":
        throw new BootstrapError(
          this.#host,
          "platform",
          `the remote is ${detail}, but ${this.#local.path} is built for ` +
            `${describePlatforms(this.#platforms ?? [])}`,
          { remotePlatform: detail },
        );
      case "directory":
        throw new BootstrapError(
          this.#host,
          "directory",
          `no usable cache directory${
            this.#opts.remoteDir === undefined ? " (pass bootstrap.remoteDir)" : ""
          }: ${detail}`,
        );
      case "write":
        throw new BootstrapError(
          this.#host,
          "write",
          `writing ${detail} failed (disk full?); ${await explainEnd()}`,
          at,
        );
      case "verify":
        throw new BootstrapError(
          this.#host,
          "verify",
          `the upload arrived damaged: ${detail} of ${this.#local.size} bytes, ` +
            `or a sha256 other than ${this.#local.sha256}`,
          at,
        );
      case "install":
        throw new BootstrapError(
          this.#host,
          "install",
          `cannot chmod or rename the upload into place; ${await explainEnd()}`,
          at,
        );
      case "noexec":
        throw new BootstrapError(
          this.#host,
          "noexec",
          "the file cannot be executed (its filesystem is mounted noexec?)",
          at,
        );
    }
    throw this.#unexpected(line);
  }

  async #ended(
    explainEnd: () => Promise<string | undefined>,
    awaited: string,
    cause?: unknown,
  ): Promise<BootstrapError> {
    const why = await explainEnd() ?? "ssh closed its output";
    return new BootstrapError(
      this.#host,
      "exited",
      `the connection ended before ${awaited}: ${why}`,
      {
        remotePath: this.remotePath,
        cause,
      },
    );
  }

  #unexpected(line: Answer): BootstrapError {
    return new BootstrapError(
      this.#host,
      "protocol",
      `unexpected answer from the remote script: ${JSON.stringify(line.words.join(" "))}`,
      { remotePath: this.remotePath },
    );
  }
}
