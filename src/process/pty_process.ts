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
 * everything the child wrote has been read (see output_fence.ts).
 *
 * Once the marker is in the terminal, nothing but its arrival ends the
 * output. An earlier version also ended it after a quiet period, and under
 * load that timer won: with eight or more terminals exiting at once, Deno
 * ran the timer before it polled terminals that had output waiting, and
 * whole outputs were dropped. Silence now only ends the wait when the
 * marker cannot be written (a terminal whose output was stopped with ^S).
 *
 * @module
 */
import { close, constants as fsConstants, openSync } from "node:fs";
import { ReadStream } from "node:tty";
import type { TerminalSize } from "../protocol/methods.ts";
import { ExitDrain } from "./exit_drain.ts";
import { canWriteForeignFds } from "../runtime/runtime.ts";
import { eagainDelay, FdWriter, nodeWriteOnce } from "./fd_writer.ts";
import { OutputFence } from "./output_fence.ts";
import { ProcessGroup, signalGroup } from "./kill_tree.ts";
import { readProcStat } from "./proc_stat.ts";
import { loadNativePty, type NativePty } from "./pty_native.ts";
import { exitStatusOf } from "./signals.ts";
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
    native.helperPath ?? "",
    (code, signal) => ref.proc?.exited(code, signal),
  );
  ref.proc = new PtyProcess(forked.fd, forked.pid, forked.pty, native, req);
  return ref.proc;
}

/**
 * Every terminal's reads land in this one buffer, and are lent to the
 * handlers, which copy what they keep. The master yields ~4 KiB per read,
 * and Node's stream reads had allocated 64 KiB for each and emitted it
 * through the stream machinery (docs/performance.md).
 */
const READ_BUFFER = new Uint8Array(64 * 1024);

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
  /** Signals reach the group, and after the reap only what was left of it. */
  #group: ProcessGroup;
  #onOutput: SpawnRequest["onOutput"];
  /** Set once the child exited; output is then scanned for its marker. */
  #fence: OutputFence | undefined;
  /** Retries a marker that a full or stopped terminal did not take yet. */
  #fenceRetry: ReturnType<typeof setTimeout> | undefined;
  #fenceAttempts = 0;
  /**
   * Writes to the master with non-blocking `write(2)`s: Node's own
   * `fs.writeSync`, or under Deno (which refuses fs writes to descriptors it
   * did not open) the patched addon's `write`. Not the terminal's stream:
   * Node's retries EAGAIN in a busy loop on the main thread when the child
   * does not read its input, and Deno's stopped for good once the terminal
   * was full (a 50 KB paste stalled after ~16 KB). Only an addon without
   * `write` (node-pty's macOS prebuilds, under Deno) leaves the stream.
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
    this.#group = new ProcessGroup(pid);
    this.#fd = fd;
    this.#native = native;
    this.#onOutput = req.onOutput;
    this.#masterWriter = canWriteForeignFds
      ? new FdWriter(fd, nodeWriteOnce)
      : native.write
      ? new FdWriter(fd, native.write)
      : undefined;
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
    this.#socket = new ReadStream(
      fd,
      {
        onread: {
          buffer: READ_BUFFER,
          callback: (n: number, buf: Uint8Array) => this.#onRead(buf.subarray(0, n)),
        },
      } as ConstructorParameters<typeof ReadStream>[1],
    );
    // A terminal's stream starts reading only when asked (no "data" listener here).
    this.#socket.resume();
    this.#drain = new ExitDrain(1, req.drainQuietMs, (status) => {
      // Forced (marker never seen): what was held back is still output.
      this.#dropFence();
      this.#stdinOpen = false;
      this.#masterWriter?.cancel(`process ${pid} has exited`);
      this.#releaseSlave();
      this.#socket.destroy();
      resolveFinished(status);
    }, () => this.#confirmQuiet());
    // EIO on the master means the slave side is gone: EOF.
    this.#socket.on("error", () => this.#streamEnded());
    this.#socket.on("end", () => this.#streamEnded());
    this.#socket.on("close", () => this.#streamEnded());
  }

  /** A read of the master, lent: handlers copy what they keep. */
  #onRead(chunk: Uint8Array): void {
    this.#drain.data();
    if (this.#fence === undefined) this.#onOutput("pty", chunk);
    else this.#scanForMarker(chunk);
  }

  /** Called by the addon's exit watcher. */
  exited(code: number, signal: number): void {
    if (this.#exitSeen) return;
    this.#exitSeen = true;
    this.#group.reaped();
    this.#stdinOpen = false;
    this.#writeMarker();
    this.#drain.exit(exitStatusOf(code, signal));
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
    await this.#group.killTree(signal);
  }

  signal(signal: string): void {
    this.#group.signal(signal);
    if (this.#group.isReaped) return;
    // A job-control shell runs its foreground job in a group of its own and
    // ignores SIGINT itself; like Ctrl-C on a terminal, the signal must
    // reach that job. The kernel only lets the terminal's foreground group
    // be a group of the child's own session; a stat whose session is not
    // the child's belongs to a process that reused its pid.
    void readProcStat(this.pid).then((stat) => {
      if (!stat || stat.session !== this.pid) return;
      if (stat.tpgid > 0 && stat.tpgid !== this.pid) signalGroup(stat.tpgid, signal);
    });
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

  /**
   * Fence the output: once the marker is in the terminal, its arrival is
   * the end of the output, however long the event loop takes to read it.
   */
  #writeMarker(): void {
    const fd = this.#slaveFd;
    // Without the slave we rely on EIO, which arrives once the child's
    // side is closed, or on silence.
    if (fd === undefined) return;
    this.#fence = new OutputFence(fd);
    this.#pushMarker();
  }

  /** Returns whether the write made progress. */
  #pushMarker(): boolean {
    const fence = this.#fence;
    if (fence === undefined || this.#drain.fenced) return false;
    const before = fence.written;
    const result = fence.push();
    if (result === "written") {
      this.#drain.fence();
    } else if (result === "failed") {
      // The output cannot be fenced: EOF or silence ends it.
      this.#dropFence();
      this.#releaseSlave();
    } else if (this.#fenceRetry === undefined) {
      // A full terminal takes the marker once it is read; a stopped one
      // (^S) never does, and then silence ends the wait.
      const delay = eagainDelay(this.#fenceAttempts++);
      this.#fenceRetry = setTimeout(() => {
        this.#fenceRetry = undefined;
        this.#pushMarker();
      }, delay);
    }
    return fence.written > before;
  }

  /**
   * Asked when the output has been silent for the drain period while the
   * marker could not be written: silence counts only if one more attempt
   * at the marker gets no byte further.
   */
  #confirmQuiet(): boolean {
    return this.#fence === undefined || !this.#pushMarker();
  }

  #scanForMarker(chunk: Uint8Array): void {
    const { output, found } = this.#fence!.scan(chunk);
    if (output) this.#onOutput("pty", output);
    if (!found) return;
    this.#fence = undefined;
    this.#streamEnded();
  }

  /** Stop fencing; what was held back as a possible marker is output. */
  #dropFence(): void {
    if (this.#fenceRetry !== undefined) clearTimeout(this.#fenceRetry);
    this.#fenceRetry = undefined;
    const carry = this.#fence?.takeCarry();
    this.#fence = undefined;
    if (carry) this.#onOutput("pty", carry);
  }

  #releaseSlave(): void {
    const fd = this.#slaveFd;
    if (fd === undefined) return;
    this.#slaveFd = undefined;
    close(fd, () => {});
  }
}
