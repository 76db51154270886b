/**
 * PTY-backed processes. The child leads a new session with the terminal as
 * its controlling tty. The server holds the slave side open until the child
 * has exited, so that the kernel never hangs the terminal up while output is
 * still in flight (under Node that race lost the tail of fast exits).
 *
 * @module
 */
import { close, constants as fsConstants, openSync } from "node:fs";
import { ReadStream } from "node:tty";
import type { TerminalSize } from "../protocol/methods.ts";
import { ExitDrain } from "./exit_drain.ts";
import { signalGroup } from "./kill_tree.ts";
import { loadNativePty, type NativePty } from "./pty_native.ts";
import { signalName } from "./signals.ts";
import { checkCwd, resolveProgram } from "./spawn_checks.ts";
import {
  type ExitStatus,
  type ProcessHandle,
  type SpawnRequest,
  StdinClosedError,
} from "./types.ts";

/** The character a terminal turns into end-of-file (Ctrl-D). */
const VEOF = new Uint8Array([0x04]);

/**
 * Start a child on a new pseudo-terminal. Resolves once the child exists.
 *
 * @throws {SpawnCheckError} when the program or cwd cannot be used
 */
export async function spawnPtyProcess(req: SpawnRequest): Promise<ProcessHandle> {
  await checkCwd(req.cwd);
  // Checked here so a bad program is an error with an errno, not a child
  // that prints "execvp failed" and exits 1. The fork still gets argv[0]
  // as given, so the child sees the name the client chose.
  await resolveProgram(req.argv[0], req.env, req.cwd);
  const native = loadNativePty();
  const env = Object.entries(req.env).map(([k, v]) => `${k}=${v}`);
  // The addon reports the exit from a watcher thread, so the callback never
  // runs before fork() has returned and `ref.proc` is set.
  const ref: { proc?: PtyProcess } = {};
  const forked = native.fork(
    req.argv[0],
    req.argv.slice(1),
    env,
    req.cwd,
    req.size.cols,
    req.size.rows,
    -1,
    -1,
    false,
    "",
    (code, signal) => ref.proc?.exited(code, signal),
  );
  ref.proc = new PtyProcess(forked.fd, forked.pid, forked.pty, native, req);
  return ref.proc;
}

class PtyProcess implements ProcessHandle {
  readonly pid: number;
  readonly finished: Promise<ExitStatus>;
  #fd: number;
  #native: NativePty;
  #socket: ReadStream;
  #slaveFd: number | undefined;
  #stdinOpen = true;
  #drain: ExitDrain;
  #exitSeen = false;

  constructor(
    fd: number,
    pid: number,
    slavePath: string,
    native: NativePty,
    req: SpawnRequest,
  ) {
    this.pid = pid;
    this.#fd = fd;
    this.#native = native;
    try {
      this.#slaveFd = openSync(
        slavePath,
        fsConstants.O_RDWR | fsConstants.O_NOCTTY,
      );
    } catch {
      // The child may already be gone and the pty released; reading the
      // master still yields what it wrote.
      this.#slaveFd = undefined;
    }
    let resolveFinished!: (s: ExitStatus) => void;
    this.finished = new Promise((r) => resolveFinished = r);
    this.#socket = new ReadStream(fd);
    this.#drain = new ExitDrain(1, req.drainQuietMs, (status) => {
      this.#stdinOpen = false;
      this.#releaseSlave();
      this.#socket.destroy();
      resolveFinished(status);
    });
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.#drain.streamEnded();
    };
    this.#socket.on("data", (chunk: Uint8Array) => {
      this.#drain.data();
      req.onOutput("pty", chunk);
    });
    // EIO on the master is how a pty says the slave side is gone: EOF.
    this.#socket.on("error", end);
    this.#socket.on("end", end);
    this.#socket.on("close", end);
  }

  /** Called by the addon's exit watcher. */
  exited(code: number, signal: number): void {
    if (this.#exitSeen) return;
    this.#exitSeen = true;
    this.#stdinOpen = false;
    // Now that the child is gone, let the master see EOF once what the
    // child wrote has been read.
    this.#releaseSlave();
    this.#drain.exit(
      signal > 0
        ? { exitCode: 128 + signal, signal: signalName(signal) }
        : { exitCode: code, signal: null },
    );
  }

  get stdinOpen(): boolean {
    return this.#stdinOpen;
  }

  write(data: Uint8Array): Promise<void> {
    if (!this.#stdinOpen) return Promise.reject(new StdinClosedError(this.pid));
    return new Promise((resolve, reject) => {
      this.#socket.write(data, (err) => err ? reject(err) : resolve());
    });
  }

  async closeStdin(): Promise<void> {
    if (!this.#stdinOpen) throw new StdinClosedError(this.pid);
    await this.write(VEOF);
    this.#stdinOpen = false;
  }

  resize(size: TerminalSize): void {
    this.#native.resize(this.#fd, size.cols, size.rows);
  }

  signal(signal: string): void {
    signalGroup(this.pid, signal);
  }

  pause(): void {
    this.#socket.pause();
    this.#drain.pause();
  }

  resume(): void {
    this.#socket.resume();
    this.#drain.resume();
  }

  #releaseSlave(): void {
    const fd = this.#slaveFd;
    if (fd === undefined) return;
    this.#slaveFd = undefined;
    close(fd, () => {});
  }
}
