/**
 * PTY-backed processes. The child leads a new session with the terminal as
 * its controlling tty.
 *
 * Knowing when a PTY's output is complete is the hard part. Waiting for EIO
 * on the master loses the tail under Node: the read error destroys the
 * socket while the last chunk may still sit in its buffer. So the server
 * holds the slave side open (the master never sees EIO), and once the child
 * has exited it writes a random end marker into the slave. The terminal
 * delivers bytes in order, so when the marker comes out of the master,
 * everything the child wrote has been read. The marker uses only digits and
 * upper-case letters, which no output post-processing (ONLCR, OLCUC)
 * changes.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import { close, constants as fsConstants, openSync, readFileSync } from "node:fs";
import { ReadStream } from "node:tty";
import type { TerminalSize } from "../protocol/methods.ts";
import { ExitDrain } from "./exit_drain.ts";
import { isDeno } from "../runtime/runtime.ts";
import { FdWriter } from "./fd_writer.ts";
import {
  type GroupLeftovers,
  leftoversOf,
  signalGroup,
  signalLeftovers,
  signalTree,
} from "./kill_tree.ts";
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
const VEOF = 0x04;
/**
 * Bytes after which a canonical-mode terminal holds no unsent input: line
 * ends (CR is mapped to NL), EOF, and the interrupt and kill-line keys,
 * which discard the line.
 */
const LINE_CLEARING = new Set([0x0a, 0x0d, VEOF, 0x03, 0x15]);

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

/**
 * The foreground process group of `pid`'s controlling terminal (`tpgid` in
 * `/proc/PID/stat`), or undefined when there is none or it cannot be read.
 */
function foregroundGroupOf(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // Fields resume after the command name's last ')': state, ppid, pgrp,
  // session, tty_nr, tpgid.
  const tpgid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[5]);
  return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : undefined;
}

class PtyProcess implements ProcessHandle {
  readonly pid: number;
  readonly finished: Promise<ExitStatus>;
  #fd: number;
  #native: NativePty;
  #socket: ReadStream;
  #slaveFd: number | undefined;
  #stdinOpen = true;
  /** Whether the last byte written left a partial line in the terminal. */
  #lineOpen = false;
  #drain: ExitDrain;
  #exitSeen = false;
  /** Whether the master's output reached its end (marker, EOF or EIO). */
  #ended = false;
  /**
   * Once the child has been reaped its pid may go to another process; from
   * then on only what was left of its group at that moment is signalled.
   */
  #leftovers: Promise<GroupLeftovers | undefined> | undefined;
  #onOutput: SpawnRequest["onOutput"];
  /** Set once the end marker was written; output is then scanned for it. */
  #marker: Buffer | undefined;
  /** Bytes held back because they might be the start of the marker. */
  #carry: Buffer | undefined;
  /** Writes the marker into the slave; a full terminal only delays it. */
  #markerWriter: FdWriter | undefined;
  /**
   * Writes to the master under Node, whose TTY stream retries EAGAIN in a
   * busy loop on the main thread when the child does not read its input.
   * Deno refuses fs writes to the raw fd, and its stream does not spin.
   */
  #masterWriter: FdWriter | undefined;

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
    this.#onOutput = req.onOutput;
    this.#masterWriter = isDeno ? undefined : new FdWriter(fd);
    try {
      // Non-blocking: the marker is written into a terminal that may be
      // full or stopped (^S), and no thread may wait on that.
      this.#slaveFd = openSync(
        slavePath,
        fsConstants.O_RDWR | fsConstants.O_NOCTTY | fsConstants.O_NONBLOCK,
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
      // Forced (marker never seen): what was held back is still output.
      this.#flushCarry();
      this.#marker = undefined;
      this.#stdinOpen = false;
      this.#markerWriter?.cancel("the output is complete");
      this.#masterWriter?.cancel(`process ${pid} has exited`);
      this.#releaseSlave();
      this.#socket.destroy();
      resolveFinished(status);
    });
    this.#socket.on("data", (chunk: Buffer) => {
      this.#drain.data();
      if (this.#marker === undefined) this.#onOutput("pty", chunk);
      else this.#scanForMarker(chunk);
    });
    // EIO on the master means the slave side is gone: EOF.
    this.#socket.on("error", () => this.#streamEnded());
    this.#socket.on("end", () => this.#streamEnded());
    this.#socket.on("close", () => this.#streamEnded());
  }

  /** Called by the addon's exit watcher. */
  exited(code: number, signal: number): void {
    if (this.#exitSeen) return;
    this.#exitSeen = true;
    this.#leftovers = leftoversOf(this.pid);
    this.#stdinOpen = false;
    this.#writeMarker();
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
    if (data.length > 0) this.#lineOpen = !LINE_CLEARING.has(data[data.length - 1]);
    return this.#writeMaster(data);
  }

  closeStdin(): Promise<void> {
    if (!this.#stdinOpen) return Promise.reject(new StdinClosedError(this.pid));
    this.#stdinOpen = false;
    // EOF ends a read only at the start of a line: after unsent input the
    // first one merely sends it, so a user types Ctrl-D twice.
    return this.#writeMaster(new Uint8Array(this.#lineOpen ? [VEOF, VEOF] : [VEOF]));
  }

  resize(size: TerminalSize): void {
    this.#native.resize(this.#fd, size.cols, size.rows);
  }

  async killTree(signal: string): Promise<void> {
    if (this.#leftovers) await signalLeftovers(await this.#leftovers, signal);
    else await signalTree(this.pid, signal);
  }

  signal(signal: string): void {
    if (this.#leftovers) {
      void this.#leftovers.then((l) => signalLeftovers(l, signal));
      return;
    }
    signalGroup(this.pid, signal);
    // A job-control shell runs its foreground job in a group of its own and
    // ignores SIGINT itself; like Ctrl-C on a terminal, the signal must
    // reach that job. The kernel only lets the terminal's foreground group
    // be a group of the child's own session.
    const foreground = foregroundGroupOf(this.pid);
    if (foreground !== undefined && foreground !== this.pid) signalGroup(foreground, signal);
  }

  pause(): void {
    this.#socket.pause();
    this.#drain.pause();
  }

  resume(): void {
    this.#socket.resume();
    this.#drain.resume();
  }

  #writeMaster(data: Uint8Array): Promise<void> {
    if (this.#masterWriter) return this.#masterWriter.write(data);
    return new Promise((resolve, reject) => {
      this.#socket.write(data, (err) => err ? reject(err) : resolve());
    });
  }

  #streamEnded(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#drain.streamEnded();
  }

  #writeMarker(): void {
    const fd = this.#slaveFd;
    if (fd === undefined) {
      // Without the slave we rely on EIO, which arrives once the child's
      // side is closed.
      return;
    }
    const marker = Buffer.from(`\x1b[${randomBytes(12).toString("hex").toUpperCase()}Z`);
    this.#marker = marker;
    this.#markerWriter = new FdWriter(fd, { chunkBytes: isDeno ? 1 : undefined });
    this.#markerWriter.write(marker).catch(() => {
      // Cancelled because the output completed anyway, or the write failed:
      // then output cannot be fenced, and EOF or the quiet timer ends it.
      if (this.#marker !== marker) return;
      this.#flushCarry();
      this.#marker = undefined;
      this.#releaseSlave();
    });
  }

  #scanForMarker(chunk: Buffer): void {
    const marker = this.#marker!;
    const data = this.#carry ? Buffer.concat([this.#carry, chunk]) : chunk;
    this.#carry = undefined;
    const at = data.indexOf(marker);
    if (at >= 0) {
      if (at > 0) this.#onOutput("pty", data.subarray(0, at));
      this.#marker = undefined;
      this.#streamEnded();
      return;
    }
    // Emit all but a tail that could be the marker's beginning.
    const keep = Math.min(data.length, marker.length - 1);
    if (data.length > keep) this.#onOutput("pty", data.subarray(0, data.length - keep));
    if (keep > 0) this.#carry = Buffer.from(data.subarray(data.length - keep));
  }

  #flushCarry(): void {
    const carry = this.#carry;
    this.#carry = undefined;
    if (carry && carry.length > 0) this.#onOutput("pty", carry);
  }

  #releaseSlave(): void {
    const fd = this.#slaveFd;
    if (fd === undefined) return;
    this.#slaveFd = undefined;
    close(fd, () => {});
  }
}
