/**
 * The interface every process backend (pipes, PTY) implements, so the
 * server's process table never knows which one it drives.
 *
 * @module
 */
import type { StreamName, TerminalSize } from "../protocol/methods.ts";

/** How a process ended. */
export interface ExitStatus {
  /** Exit status; 128+N when killed by signal N. */
  exitCode: number;
  /** The signal's name when a signal ended it, else null. */
  signal: string | null;
  /**
   * `performance.now()` when the child exited, which can be well before its
   * output was complete (a grandchild holding the pipes).
   */
  exitedAt?: number;
}

/** Everything needed to start a child. */
export interface SpawnRequest {
  /** Program and arguments; `argv[0]` is looked up in `env.PATH`. */
  argv: string[];
  /** The `argv[0]` the child sees, when it differs from the program. */
  arg0?: string | null;
  /** Absolute working directory. */
  cwd: string;
  /** The child's entire environment. */
  env: Record<string, string>;
  /** PTY (true) or pipes (false). */
  tty: boolean;
  /** Pipes only: keep stdin open for writes. */
  pipeStdin: boolean;
  /** PTY only: initial size. */
  size: TerminalSize;
  /**
   * Receives every chunk read from the child, in order. The bytes are only
   * lent for the call: a backend may read into the same buffer again, so a
   * receiver that keeps them copies them.
   */
  onOutput(stream: StreamName, chunk: Uint8Array): void;
  /**
   * After the child exits, how long its output streams may stay silent
   * before they are closed even though a leftover grandchild holds them.
   */
  drainQuietMs: number;
}

/** A running (or finished) child process. */
export interface ProcessHandle {
  /** The child's pid, which is also its process group id. */
  readonly pid: number;
  /**
   * Resolves once the child has exited and its output streams were read to
   * the end, so every `onOutput` call happens before it resolves.
   */
  readonly finished: Promise<ExitStatus>;
  /** Whether stdin accepts writes. */
  readonly stdinOpen: boolean;
  /** Write to stdin; resolves once the bytes were handed to the OS. */
  write(data: Uint8Array): Promise<void>;
  /** Send EOF: close the pipe, or type the terminal's EOF character. */
  closeStdin(): Promise<void>;
  /** Change a PTY's size (the child gets SIGWINCH). */
  resize(size: TerminalSize): void;
  /** Send a signal to the child's process group. */
  signal(signal: string): void;
  /**
   * Send a signal to the whole tree: the group and, while the child lives,
   * descendants that left it. Once the child has been reaped its pid may
   * belong to someone else, so only members that provably belong to the
   * old group are signalled.
   */
  killTree(signal: string): Promise<void>;
  /** Stop reading output (flow control); the child blocks when buffers fill. */
  pause(): void;
  /** Resume reading output. */
  resume(): void;
}

/** Thrown when writing to a process whose stdin is closed. */
export class StdinClosedError extends Error {
  /** @param pid the process whose stdin is closed */
  constructor(pid: number) {
    super(`stdin of pid ${pid} is closed`);
    this.name = "StdinClosedError";
  }
}

/** Thrown when an operation needs a PTY and the process has none. */
export class NotATerminalError extends Error {
  /** @param pid the pipe process */
  constructor(pid: number) {
    super(`pid ${pid} has no terminal`);
    this.name = "NotATerminalError";
  }
}
