/**
 * The client's half of the conversation with the remote bootstrap script:
 * send the script, read its answers, upload the binary the remote chose
 * when it asks, and turn every failure the script reports into a
 * {@linkcode BootstrapError} that says what to do about it. Only the
 * answers are timed; the upload is not, since a slow link cannot be told
 * from a stuck remote until the remote says it has every byte.
 *
 * @module
 */
import { deadline, within } from "../../util/deadline.ts";
import type { Candidate } from "./candidates.ts";
import { BootstrapError } from "./errors.ts";
import { remoteFailure } from "./failures.ts";
import { type Answer, MarkedLines } from "./lines.ts";
import type { BootstrapEvent, SshBootstrapOptions, UploadEncoding } from "./options.ts";
import { ProgressLine } from "./progress_line.ts";
import { type UploadSource, uploadSource } from "./upload_source.ts";

type EndExplainer = () => Promise<string | undefined>;

const encoder = new TextEncoder();

/**
 * The client's half of the conversation with the remote script, for one
 * connection. `remotePath`, `target` and `uploaded` are known once
 * {@linkcode run} resolves.
 *
 * @example
 * ```ts
 * import { BootstrapSession } from "./conversation.ts";
 * import { resolveCandidates } from "./candidates.ts";
 * declare const stdio: { stdout: ReadableStream<Uint8Array>; stdin: WritableStream<Uint8Array> };
 * declare const script: Uint8Array;
 * const boot = { localBinary: "dist/exec-server" };
 * const candidates = await resolveCandidates("me@pi", boot);
 * const session = new BootstrapSession("me@pi", candidates, "M", boot);
 * const serverOutput = await session.run(script, stdio.stdout, stdio.stdin, () =>
 *   Promise.resolve(undefined));
 * console.log(session.target, session.remotePath, session.uploaded, serverOutput);
 * ```
 */
export class BootstrapSession {
  /** The binary's path on the remote, once the script has named it. */
  remotePath: string | undefined;
  /** The target of the binary the remote chose, once it has. */
  target: string | undefined;
  /** Whether this connection uploaded the binary (false: the cached copy was valid). */
  uploaded = false;
  #host: string;
  #candidates: Candidate[];
  #chosen: Candidate | undefined;
  #marker: string;
  #opts: SshBootstrapOptions;
  #timeoutMs: number;
  #line: ProgressLine | undefined;

  /**
   * @param host the ssh destination, for error messages
   * @param candidates the binaries offered, in the order the script lists them
   * @param marker what the script's lines for the client start with
   * @param opts the `bootstrap` option, for the timeout, progress and messages
   */
  constructor(host: string, candidates: Candidate[], marker: string, opts: SshBootstrapOptions) {
    this.#host = host;
    this.#candidates = candidates;
    this.#marker = marker;
    this.#opts = opts;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#line = opts.progress ? new ProgressLine(host) : undefined;
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
    explainEnd: EndExplainer,
  ): Promise<ReadableStream<Uint8Array>> {
    const lines = new MarkedLines(stdout, this.#marker);
    const writer = stdin.getWriter();
    try {
      // A failed write means the remote is gone; the answer (or its absence) says why.
      writer.write(script).catch(() => {});
      let answer = await this.#answer(lines, explainEnd, "the remote script's first answer");
      if (answer.words[0] === "upload") {
        answer = await this.#upload(answer, lines, writer, explainEnd);
      }
      // `ready cached|uploaded INDEX PATH`
      const [word, how, index, ...path] = answer.words;
      if (word !== "ready" || (how !== "cached" && how !== "uploaded")) {
        throw this.#unexpected(answer);
      }
      this.#choose(index, answer);
      this.remotePath = path.join(" ");
      this.uploaded = how === "uploaded";
      this.#emit({
        kind: "ready",
        remotePath: this.remotePath,
        target: this.target!,
        uploaded: this.uploaded,
      });
    } finally {
      this.#line?.end();
    }
    writer.releaseLock();
    return lines.rest();
  }

  /** Answer `upload INDEX ACCEPT PATH`: the header line, then the bytes; resolves to `ready`. */
  async #upload(
    ask: Answer,
    lines: MarkedLines,
    writer: WritableStreamDefaultWriter<Uint8Array>,
    explainEnd: EndExplainer,
  ): Promise<Answer> {
    const [, index, accept, ...path] = ask.words;
    const chosen = this.#choose(index, ask);
    if (accept !== "gzip" && accept !== "raw") throw this.#unexpected(ask);
    this.remotePath = path.join(" ");
    const source = await this.#source(chosen, accept);
    const remotePath = this.remotePath;
    const wireBytes = source.bytes;
    this.#emit({
      kind: "upload",
      remotePath,
      target: chosen.target,
      encoding: source.encoding,
      wireBytes,
      binaryBytes: chosen.binary.size,
      totalBytes: wireBytes,
    });
    const received = await this.#transfer(lines, writer, explainEnd, source);
    if (received.words[0] !== "received") throw this.#unexpected(received);
    return this.#answer(lines, explainEnd, "the remote's check of the upload");
  }

  /** The upload for the chosen binary; a local failure is a BootstrapError of kind `local`. */
  async #source(chosen: Candidate, accept: UploadEncoding): Promise<UploadSource> {
    try {
      return await uploadSource(
        chosen.binary,
        accept,
        () => this.#line?.compressing(chosen.target, chosen.binary.size),
      );
    } catch (err) {
      throw this.#local(err);
    }
  }

  /**
   * Send the header and the bytes while watching the remote: resolves to
   * its next answer (`received`, or an error it reported mid-way).
   */
  async #transfer(
    lines: MarkedLines,
    writer: WritableStreamDefaultWriter<Uint8Array>,
    explainEnd: EndExplainer,
    source: UploadSource,
  ): Promise<Answer> {
    const remotePath = this.remotePath!;
    let stop = false;
    const sent = this.#send(writer, source, () => stop, (sentBytes) => {
      this.#emit({ kind: "progress", remotePath, sentBytes, totalBytes: source.bytes });
    });
    const early = lines.next();
    const awaited = "the upload was complete";
    // A local failure (unreadable file, a throwing onProgress) rejects the race as it is.
    const first = await Promise.race([
      sent.then((writeError) => ({ writeError })),
      early.then((line) => ({ line }), (err: unknown) => ({ line: err as Error })),
    ]).finally(() => stop = true);
    if ("line" in first) {
      // The remote's answer decides now, whatever becomes of the last write.
      sent.catch(() => {});
      // The remote answered before the last write returned: `received`, when
      // the pipe took the tail but told us late; else an error, or nonsense.
      return await this.#check(first.line, explainEnd, awaited);
    }
    if (first.writeError !== undefined) {
      // The remote went away; its last words, if any, say why.
      const line = await within(early.catch(() => null), 2000);
      if (!line) throw await this.#ended(explainEnd, awaited, first.writeError);
      return await this.#check(line, explainEnd, awaited);
    }
    // Every byte is in ssh's hands, but on a slow link much of it may
    // still be on the way: no timer until the remote says it has it all.
    // ssh ending (a dead connection) still ends the wait.
    return await this.#check(await early.catch((err: Error) => err), explainEnd, awaited);
  }

  /**
   * Send `ENCODING BYTES\n`, then the bytes; resolves to the write error
   * when the remote stops reading, else undefined. The header always goes
   * out, since the remote waits for it.
   */
  async #send(
    writer: WritableStreamDefaultWriter<Uint8Array>,
    source: UploadSource,
    stopped: () => boolean,
    progress: (sentBytes: number) => void,
  ): Promise<unknown> {
    const write = (bytes: Uint8Array) =>
      writer.write(bytes).then(() => undefined, (err: unknown) => err ?? new Error("write failed"));
    const headerError = await write(encoder.encode(`${source.encoding} ${source.bytes}\n`));
    if (headerError !== undefined) return headerError;
    const chunks = source.chunks();
    try {
      let sent = 0;
      while (!stopped()) {
        const next = await chunks.next().catch((err: unknown) => {
          throw this.#local(err);
        });
        if (next.done) return undefined;
        const writeError = await write(next.value);
        if (writeError !== undefined) return writeError;
        sent += next.value.byteLength;
        progress(sent);
      }
      return undefined;
    } finally {
      await chunks.return(undefined);
    }
  }

  /** The candidate the remote named by its index, now the chosen one. */
  #choose(index: string | undefined, line: Answer): Candidate {
    const chosen = /^\d+$/.test(index ?? "") ? this.#candidates[Number(index)] : undefined;
    if (chosen === undefined) throw this.#unexpected(line);
    this.#chosen = chosen;
    this.target = chosen.target;
    return chosen;
  }

  #emit(event: BootstrapEvent): void {
    this.#line?.event(event);
    this.#opts.onProgress?.(event);
  }

  /** The next marked line, within the timeout; errors and the end become BootstrapErrors. */
  async #answer(lines: MarkedLines, explainEnd: EndExplainer, what: string): Promise<Answer> {
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
    explainEnd: EndExplainer,
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
    throw await remoteFailure(kind, rest.join(" "), {
      host: this.#host,
      remotePath: this.remotePath,
      candidates: this.#candidates,
      chosen: this.#chosen,
      remoteDirGiven: this.#opts.remoteDir !== undefined,
      explainEnd,
    }) ?? this.#unexpected(line);
  }

  async #ended(
    explainEnd: EndExplainer,
    awaited: string,
    cause?: unknown,
  ): Promise<BootstrapError> {
    const why = await explainEnd() ?? "ssh closed its output";
    return new BootstrapError(
      this.#host,
      "exited",
      `the connection ended before ${awaited}: ${why}`,
      { remotePath: this.remotePath, cause },
    );
  }

  #local(err: unknown): unknown {
    if (err instanceof BootstrapError) return err;
    return new BootstrapError(
      this.#host,
      "local",
      `cannot upload ${this.#chosen?.binary.path}: ${err instanceof Error ? err.message : err}`,
      { remotePath: this.remotePath, cause: err },
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
