/**
 * The process handle shared by remote processes (driven over the protocol)
 * and local ones (driven directly), so code written against
 * {@linkcode ExecProcess} runs the same either way.
 *
 * @module
 */
import type { StreamName, TerminalSize } from "../protocol/methods.ts";
import { AsyncQueue } from "../util/async_queue.ts";
import { concatBytes } from "../util/bytes.ts";
import { checkSize, type SpawnOptions } from "./spawn_options.ts";

/** One chunk of a process's output. */
export interface OutputChunk {
  /** `"stdout"` or `"stderr"` for pipes, `"pty"` for a terminal. */
  stream: StreamName;
  /** The bytes, exactly as the process wrote them. */
  data: Uint8Array;
  /** Sequence number, from 1, shared by all streams of the process. */
  seq: number;
}

/** How a process ended. */
export interface ProcessExit {
  /** Exit status; 128+N when killed by signal N. */
  exitCode: number;
  /** The signal that ended it, e.g. `"SIGKILL"`, or null. */
  signal: string | null;
  /** Run time in ms (0 when the server did not report it). */
  durationMs: number;
  /**
   * Sandboxed processes only: whether the failure looks like the sandbox's
   * doing (a denied write or connection); absent when the server does not
   * report it (processes without a sandbox, in this project's dialect).
   */
  sandboxDenied?: boolean;
}

/** The output and exit of a finished process. */
export interface RunResult extends ProcessExit {
  /** Standard output (the terminal's output for a tty process) decoded as UTF-8. */
  stdout: string;
  /** Standard error decoded as UTF-8 (empty for a tty process). */
  stderr: string;
  /** The raw bytes of `stdout`. */
  stdoutBytes: Uint8Array;
  /** The raw bytes of `stderr`. */
  stderrBytes: Uint8Array;
  /** True when `run`'s `timeoutMs` passed and the process was killed. */
  timedOut: boolean;
}

/** Options of {@linkcode SpawnedProcess.terminate}. */
export interface TerminateOptions {
  /** SIGTERM first, SIGKILL after this many ms (default: SIGKILL at once). */
  graceMs?: number;
}

/** Options of {@linkcode ExecProcess.run}. */
export interface RunOptions {
  /**
   * Bytes for the process's stdin, which is then closed. Stdin the process
   * does not read is discarded without error, as in a shell pipeline.
   */
  stdin?: string | Uint8Array;
  /** Kill the process tree (SIGKILL) after this many ms; the result says `timedOut`. */
  timeoutMs?: number;
}

/** A started process, local or remote. */
export interface SpawnedProcess {
  /** The process id on its connection (or in its local environment). */
  readonly id: string;
  /** The command it runs. */
  readonly argv: readonly string[];
  /** Whether it runs on a terminal. */
  readonly tty: boolean;
  /**
   * Every output chunk, in order, from the very first byte; the stream
   * closes after the last chunk. Unread chunks are held in memory:
   * cancel the stream when the output is not wanted.
   */
  readonly output: ReadableStream<OutputChunk>;
  /** How it ended, once it has. */
  readonly exit: ProcessExit | undefined;
  /** Write to stdin (`tty`, or `pipeStdin: true`); strings are sent as UTF-8. */
  write(data: Uint8Array | string): Promise<void>;
  /** Send EOF: close the pipe, or type the terminal's EOF character. */
  closeStdin(): Promise<void>;
  /** Change a terminal's size. */
  resize(size: TerminalSize): Promise<void>;
  /** Send a signal (`"SIGINT"`, `"INT"`, `"interrupt"`) to its process group. */
  signal(signal: string): Promise<void>;
  /** Kill its process tree; resolves to whether it was still running. */
  terminate(options?: TerminateOptions): Promise<boolean>;
  /** Resolves once it has exited and all its output has been delivered. */
  wait(): Promise<ProcessExit>;
  /** Read all output (consuming {@linkcode output}) and wait for the exit. */
  collect(): Promise<RunResult>;
}

/** Something that starts processes: an `ExecServerClient`, or an environment's `process`. */
export interface ExecProcess {
  /**
   * Start a process. Output is captured from the first byte, so nothing is
   * lost however late {@linkcode SpawnedProcess.output} is read.
   *
   * @throws {SpawnError} when the program or cwd cannot be used
   * @throws {TypeError} for invalid options
   */
  spawn(options: SpawnOptions): Promise<SpawnedProcess>;
  /**
   * Start a process, feed it `stdin`, and collect its output and exit.
   *
   * @example
   * ```ts
   * import type { ExecProcess } from "./process_handle.ts";
   * declare const exec: ExecProcess;
   * const { exitCode, stdout } = await exec.run(["uname", "-a"]);
   * ```
   */
  run(command: string[] | SpawnOptions, options?: RunOptions): Promise<RunResult>;
}

/** The operations a handle delegates to its backend. */
export interface ProcessOps {
  /** Write bytes to stdin. */
  write(data: Uint8Array): Promise<void>;
  /** Close stdin. */
  closeStdin(): Promise<void>;
  /** Resize the terminal. */
  resize(size: TerminalSize): Promise<void>;
  /** Signal the process group. */
  signal(signal: string): Promise<void>;
  /** Kill the tree, with an optional grace period; resolves to "was running". */
  terminate(graceMs: number | undefined): Promise<boolean>;
}

/** What a backend feeds into a handle. */
export interface ProcessSink {
  /** One output chunk, in order. */
  output(chunk: OutputChunk): void;
  /** The exit, after the last chunk. */
  exited(exit: ProcessExit): void;
  /** The process is lost (e.g. the connection dropped): no exit will come. */
  failed(error: unknown): void;
}

const encoder = new TextEncoder();

class Handle implements SpawnedProcess {
  readonly id: string;
  readonly argv: readonly string[];
  readonly tty: boolean;
  readonly output: ReadableStream<OutputChunk>;
  #queue: AsyncQueue<OutputChunk>;
  #ops: ProcessOps;
  #exit: ProcessExit | undefined;
  #waited: Promise<ProcessExit>;

  constructor(
    id: string,
    argv: readonly string[],
    tty: boolean,
    ops: ProcessOps,
    queue: AsyncQueue<OutputChunk>,
    waited: Promise<ProcessExit>,
  ) {
    this.id = id;
    this.argv = argv;
    this.tty = tty;
    this.#ops = ops;
    this.#queue = queue;
    this.output = queue.toReadableStream();
    this.#waited = waited;
    waited.then((exit) => this.#exit = exit, () => {});
  }

  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  write(data: Uint8Array | string): Promise<void> {
    return this.#ops.write(typeof data === "string" ? encoder.encode(data) : data);
  }

  closeStdin(): Promise<void> {
    return this.#ops.closeStdin();
  }

  resize(size: TerminalSize): Promise<void> {
    try {
      checkSize(size);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#ops.resize(size);
  }

  signal(signal: string): Promise<void> {
    return this.#ops.signal(signal);
  }

  terminate(options: TerminateOptions = {}): Promise<boolean> {
    const { graceMs } = options;
    if (graceMs !== undefined && (!Number.isInteger(graceMs) || graceMs < 0)) {
      return Promise.reject(
        new TypeError(`graceMs must be a non-negative integer, got ${String(graceMs)}`),
      );
    }
    return this.#ops.terminate(graceMs);
  }

  wait(): Promise<ProcessExit> {
    return this.#waited;
  }

  async collect(): Promise<RunResult> {
    if (this.output.locked) {
      throw new TypeError(`the output of process ${this.id} is already being read`);
    }
    const out: Uint8Array[] = [];
    const err: Uint8Array[] = [];
    const reader = this.output.getReader();
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        (value.stream === "stderr" ? err : out).push(value.data);
      }
    } finally {
      reader.releaseLock();
    }
    const exit = await this.#waited;
    const stdoutBytes = concatBytes(out);
    const stderrBytes = concatBytes(err);
    return {
      ...exit,
      stdout: new TextDecoder().decode(stdoutBytes),
      stderr: new TextDecoder().decode(stderrBytes),
      stdoutBytes,
      stderrBytes,
      timedOut: false,
    };
  }
}

/**
 * Make a handle and the sink its backend feeds. The sink may be fed before
 * anyone reads the handle: output is buffered from the first chunk.
 *
 * @example
 * ```ts
 * import { createProcessHandle, type ProcessOps } from "./process_handle.ts";
 * declare const ops: ProcessOps;
 * const { handle, sink } = createProcessHandle("p1", ["echo", "hi"], false, ops);
 * sink.output({ stream: "stdout", data: new TextEncoder().encode("hi\n"), seq: 1 });
 * sink.exited({ exitCode: 0, signal: null, durationMs: 3 });
 * (await handle.collect()).stdout; // "hi\n"
 * ```
 */
export function createProcessHandle(
  id: string,
  argv: readonly string[],
  tty: boolean,
  ops: ProcessOps,
): { handle: SpawnedProcess; sink: ProcessSink } {
  const queue = new AsyncQueue<OutputChunk>();
  let resolve!: (exit: ProcessExit) => void;
  let reject!: (err: unknown) => void;
  const waited = new Promise<ProcessExit>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A caller that never waits must not see an unhandled rejection.
  waited.catch(() => {});
  let done = false;
  const sink: ProcessSink = {
    output: (chunk) => {
      if (!done) queue.push(chunk);
    },
    exited: (exit) => {
      if (done) return;
      done = true;
      queue.end();
      resolve(exit);
    },
    failed: (error) => {
      if (done) return;
      done = true;
      queue.end(error);
      reject(error);
    },
  };
  return { handle: new Handle(id, argv, tty, ops, queue, waited), sink };
}
