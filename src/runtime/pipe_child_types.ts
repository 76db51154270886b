/**
 * The shapes shared by the runtimes' pipe children ({@linkcode PipeChild}).
 *
 * @module
 */

/** How to start a {@linkcode PipeChild}. */
export interface PipeChildOptions {
  /** Program and arguments; `argv[0]` is looked up in `env.PATH`. */
  argv: string[];
  /** The `argv[0]` the child sees, when it differs from the program. */
  arg0?: string | null;
  /** Absolute working directory. */
  cwd: string;
  /** The child's entire environment (nothing is inherited). */
  env: Record<string, string>;
  /** Keep a pipe to stdin (else stdin is /dev/null). */
  stdin: boolean;
}

/** How a child ended, as the runtime reports it. */
export interface PipeChildExit {
  /** The exit code, or null when a signal ended it. */
  code: number | null;
  /** The signal's name (`SIGTERM`) when one ended it, else null. */
  signal: string | null;
}

/** Index of an output stream: 0 for stdout, 1 for stderr. */
export type OutputIndex = 0 | 1;

/** Receives a child's output. */
export interface PipeChildReader {
  /**
   * A chunk read from stream `index`. The bytes are only valid during the
   * call: the buffer is reused for the next read.
   */
  onChunk(index: OutputIndex, bytes: Uint8Array): void;
  /** Stream `index` reached its end or failed; called once per stream. */
  onEnd(index: OutputIndex): void;
}

/** A started child on pipes. */
export interface PipeChild {
  /** Its pid, which is also its session and process group id. */
  readonly pid: number;
  /** Resolves when the child has exited (its output may still be unread). */
  readonly exited: Promise<PipeChildExit>;
  /** Start reading stdout and stderr; call once. */
  read(reader: PipeChildReader): void;
  /** Stop reading (the child blocks once the pipes fill). */
  pause(): void;
  /** Read again. */
  resume(): void;
  /** Close both output pipes; their readers end. */
  destroyOutputs(): void;
  /** Whether stdin accepts writes. */
  readonly stdinOpen: boolean;
  /** Write to stdin; resolves once the bytes were handed to the OS. */
  write(data: Uint8Array): Promise<void>;
  /** Close stdin. */
  closeStdin(): Promise<void>;
}

/** A spawn that failed; `code` is the errno name (`ENOENT`), when known. */
export class PipeSpawnError extends Error {
  /** The errno name, e.g. `ENOENT`, or `EIO` when the runtime gave none. */
  readonly code: string;

  /**
   * @param program the program that could not be started
   * @param code the errno name
   * @param cause the runtime's error
   */
  constructor(program: string, code: string, cause?: unknown) {
    super(`${program} could not be started (${code})`, { cause });
    this.name = "PipeSpawnError";
    this.code = code;
  }
}
