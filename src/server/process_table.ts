/**
 * The processes of one connection: ids, limits, output retention, waits,
 * notifications in protocol order, flow control and cleanup. It knows
 * nothing of transports; it talks to a {@linkcode NotificationSink}.
 *
 * @module
 */
import { internalError, invalidParams, invalidRequest } from "../protocol/errors.ts";
import type { ProcessReadResult, StreamName, TerminalSize } from "../protocol/methods.ts";
import type { CheckedStart } from "../protocol/spawn_rules.ts";
import { normalizeSignal, UnknownSignalError } from "../process/signals.ts";
import {
  type ControlledProcess,
  type SpawnFailedError,
  startControlled,
  type TimedExit,
} from "../process/controller.ts";
import { NotATerminalError, type ProcessHandle, StdinClosedError } from "../process/types.ts";
import { WriterCancelledError } from "../process/fd_writer.ts";
import { ExitedRetention } from "./exited_retention.ts";
import { serverIdleCollector } from "./idle_collector.ts";
import { listEntry, ManagedProcess } from "./managed_process.ts";
import type { ProcessListEntry } from "../protocol/sessions.ts";
import { OutputPacer } from "./output_pacer.ts";
import { outputNote } from "./process_notes.ts";
import { type ProcessDialect, V0_DIALECT } from "./dialect.ts";
import { within } from "../util/deadline.ts";
import type { ServerOptions } from "./options.ts";

/** Where a process table sends its notifications. */
export interface NotificationSink {
  /** Send one serialized notification; false asks the table to pause output. */
  send(text: string): boolean;
  /** Register a listener for when paused output may resume. */
  onDrain(listener: () => void): void;
}

/** Wait until every process in `procs` has finished, or `ms` have passed. */
async function finishedWithin(procs: ManagedProcess[], ms: number): Promise<void> {
  if (procs.length === 0) return;
  await within(Promise.all(procs.map((mp) => mp.proc!.finished)), ms);
}

/**
 * One connection's processes.
 *
 * @example
 * ```ts
 * import { ProcessTable } from "./process_table.ts";
 * import { resolveServerOptions } from "./options.ts";
 * const table = new ProcessTable(resolveServerOptions(), {
 *   send: (text) => (console.log(text), true),
 *   onDrain: () => {},
 * });
 * ```
 */
export class ProcessTable {
  #opts: ServerOptions;
  #sink: NotificationSink;
  #procs = new Map<string, ManagedProcess>();
  #dialect: ProcessDialect;
  /** The exited part of `#procs`, kept for reading within its own bounds. */
  #exited: ExitedRetention<ManagedProcess>;
  #paused = false;
  #closed = false;
  #pacer = new OutputPacer<ManagedProcess>((mp) => this.#flush(mp));

  /** Create an empty table that notifies through `sink`. */
  constructor(opts: ServerOptions, sink: NotificationSink, dialect: ProcessDialect = V0_DIALECT) {
    this.#dialect = dialect;
    this.#opts = opts;
    this.#sink = sink;
    this.#exited = new ExitedRetention({
      maxCount: opts.maxExitedProcesses,
      maxBytes: opts.maxExitedOutputBytes,
      ttlMs: opts.exitedRetentionMs,
    }, (mp) => {
      // Reading it from now on is the ordinary unknown-process error.
      if (this.#procs.get(mp.id) === mp) this.#procs.delete(mp.id);
    });
    sink.onDrain(() => this.#resumeAll());
  }

  /** Whether `id` names a process (running or retained). */
  has(id: string): boolean {
    return this.#procs.has(id);
  }

  /** Whether `id` names a process that is starting or running (its exit not reported yet). */
  isRunning(id: string): boolean {
    return this.#procs.get(id)?.running === true;
  }

  /** The number of processes, running or retained. */
  get size(): number {
    return this.#procs.size;
  }

  /** The number of processes starting or running (what `maxProcesses` bounds). */
  get running(): number {
    return this.#procs.size - this.#exited.size;
  }

  /** Whether output reading is paused by flow control. */
  get paused(): boolean {
    return this.#paused;
  }

  /**
   * Start a process. The id is reserved before anything is awaited, so
   * racing starts with one id cannot both succeed.
   *
   * @returns a function to call once the start response has been sent
   */
  async start(p: CheckedStart, ttlMs?: number): Promise<() => void> {
    if (this.#closed) throw invalidRequest("connection is closing");
    if (this.#procs.has(p.processId)) {
      throw invalidRequest(`duplicate process id ${p.processId}`);
    }
    if (this.running >= this.#opts.maxProcesses) {
      throw invalidRequest(
        `process limit reached: ${this.#opts.maxProcesses} running processes per connection ` +
          `(--max-processes); cannot start ${p.processId}`,
      );
    }
    const mp = new ManagedProcess(p.processId, { ...p, ttlMs }, this.#opts.maxOutputBytes);
    this.#procs.set(p.processId, mp);
    serverIdleCollector.started();
    let proc: ControlledProcess;
    try {
      proc = await startControlled(p, {
        drainQuietMs: this.#opts.exitDrainMs,
        onOutput: (stream, data) => this.#onOutput(mp, stream, data),
      });
    } catch (err) {
      this.#procs.delete(p.processId);
      const failure = err as SpawnFailedError;
      const message = `cannot start ${p.processId} (${p.argv[0]}): ${failure.message}`;
      // Not this server's failure: the request asks for what the host cannot give.
      if (failure.sandboxUnavailable) throw invalidRequest(message, { kind: "sandboxUnavailable" });
      throw internalError(message, failure.errno ? { errno: failure.errno } : undefined);
    }
    mp.proc = proc;
    this.#opts.logger.debug(`started ${p.processId} pid ${proc.handle.pid} tty=${p.tty}`);
    if (this.#closed) {
      void proc.kill();
    } else if (this.#paused) {
      proc.handle.pause();
    }
    proc.finished.then((exit) => this.#onFinished(mp, exit));
    if (mp.killWhenStarted) {
      const { graceMs } = mp.killWhenStarted;
      mp.killWhenStarted = undefined;
      void proc.kill(graceMs);
    }
    return () => this.#announce(mp);
  }

  /** **[ext]** Every process, running or retained, in the order they were started. */
  list(): ProcessListEntry[] {
    return [...this.#procs.values()].map((mp) => {
      // Output merged in this turn is part of what a read would return.
      this.#flush(mp);
      return listEntry(mp);
    });
  }

  /** The longest `ttlMs` of any process, running or retained (0 without one). */
  get longestTtlMs(): number {
    let longest = 0;
    for (const mp of this.#procs.values()) longest = Math.max(longest, mp.ttlMs ?? 0);
    return longest;
  }

  /**
   * The ids of running processes with their time to live (undefined: none
   * of their own), for a session whose connection ended.
   */
  runningTtls(): [string, number | undefined][] {
    return [...this.#procs.values()].filter((mp) => mp.running).map((mp) => [mp.id, mp.ttlMs]);
  }

  /**
   * While nobody is attached, exited processes stay readable whatever
   * their retention time (the count and byte bounds still apply).
   */
  holdExited(held: boolean): void {
    if (held) this.#exited.hold();
    else this.#exited.release();
  }

  /** Answer `process/read`, waiting up to `waitMs` when there is nothing. */
  async read(
    id: string,
    afterSeq: number,
    maxBytes: number | undefined,
    waitMs: number,
  ): Promise<ProcessReadResult> {
    const mp = this.#get(id);
    // Output merged in this turn belongs to what a read may return.
    this.#flush(mp);
    let slice = mp.output.read(afterSeq, maxBytes);
    if (slice.chunks.length === 0 && mp.running && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          mp.waiters.delete(done);
          resolve();
        }, waitMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        mp.waiters.add(done);
      });
      this.#flush(mp);
      slice = mp.output.read(afterSeq, maxBytes);
    }
    return this.#dialect.readResult(slice, mp.exit) as ProcessReadResult;
  }

  /** Write to a process's stdin. */
  async write(id: string, data: Uint8Array): Promise<void> {
    const mp = this.#get(id);
    const handle = this.#requireHandle(mp);
    if (!mp.running || !handle.stdinOpen) {
      throw invalidRequest(`stdin of process ${id} is closed`);
    }
    this.#pacer.input(mp);
    try {
      await handle.write(data);
    } catch (err) {
      if (err instanceof StdinClosedError) {
        throw invalidRequest(`stdin of process ${id} is closed`);
      }
      if (err instanceof WriterCancelledError || isCancelled(err)) {
        throw invalidRequest(
          `stdin of process ${id} is closed: it exited before the bytes were written`,
        );
      }
      throw internalError(`write to process ${id} failed: ${String(err)}`, {
        errno: (err as { code?: string }).code,
      });
    }
  }

  /** Close a process's stdin (EOF). */
  async closeStdin(id: string): Promise<void> {
    const mp = this.#get(id);
    const handle = this.#requireHandle(mp);
    if (!mp.running || !handle.stdinOpen) {
      throw invalidRequest(`stdin of process ${id} is closed`);
    }
    try {
      await handle.closeStdin();
    } catch (err) {
      if (err instanceof StdinClosedError) {
        throw invalidRequest(`stdin of process ${id} is closed`);
      }
      throw internalError(`closing stdin of process ${id} failed: ${String(err)}`);
    }
  }

  /** Resize a PTY process. */
  resize(id: string, size: TerminalSize): void {
    const mp = this.#get(id);
    const handle = this.#requireHandle(mp);
    if (!mp.running) throw invalidRequest(`process ${id} has exited`);
    try {
      handle.resize(size);
    } catch (err) {
      if (err instanceof NotATerminalError) {
        throw invalidRequest(`process ${id} has no terminal (started with tty: false)`);
      }
      throw internalError(`resize of process ${id} failed: ${String(err)}`);
    }
  }

  /** Send a signal to a process's group. */
  signal(id: string, signal: string): { signal: string } {
    let name: string;
    try {
      name = normalizeSignal(signal);
    } catch (err) {
      if (err instanceof UnknownSignalError) throw invalidParams(err.message);
      throw err;
    }
    const mp = this.#get(id);
    const handle = this.#requireHandle(mp);
    if (!mp.running) throw invalidRequest(`process ${id} has exited`);
    handle.signal(name);
    return { signal: name };
  }

  /**
   * Kill a process tree: SIGKILL at once, or SIGTERM then SIGKILL after
   * `graceMs`. Returns whether the process was running.
   */
  terminate(id: string, graceMs?: number): boolean {
    const mp = this.#procs.get(id);
    if (!mp || !mp.running) return false;
    if (!mp.proc) {
      mp.killWhenStarted = { graceMs };
      return true;
    }
    void mp.proc.kill(graceMs);
    return true;
  }

  /** Kill every process (whole trees) and stop all timers. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    this.#pacer.close();
    this.#exited.clear();
    const kills: Promise<void>[] = [];
    for (const mp of this.#procs.values()) {
      mp.proc?.dispose();
      mp.wake();
      if (!mp.proc) {
        mp.killWhenStarted = {};
        continue;
      }
      // Output is discarded from now on, but it must still be read: a
      // paused PTY or pipe would otherwise never reach EOF, keeping its
      // descriptors (and, for a PTY, its end marker) waiting forever.
      if (this.#paused) mp.proc.handle.resume();
      // Exited leaders may have left members in their group.
      kills.push(mp.proc.kill());
    }
    await Promise.all(kills);
  }

  /** Shut down politely: SIGTERM to every tree, SIGKILL after `graceMs`. */
  async terminateAll(graceMs: number): Promise<void> {
    const running = [...this.#procs.values()].filter((mp) => mp.running && mp.proc);
    await Promise.all(running.map((mp) => mp.proc!.handle.killTree("SIGTERM")));
    await finishedWithin(running, graceMs);
    // SIGKILL the rest while notifications still flow, so that the client
    // learns of these exits too; closeAll() below reports nothing.
    const left = running.filter((mp) => mp.running);
    await Promise.all(left.map((mp) => mp.proc!.kill()));
    await finishedWithin(left, graceMs);
    await this.closeAll();
  }

  #get(id: string): ManagedProcess {
    const mp = this.#procs.get(id);
    if (!mp) throw invalidRequest(`unknown process id ${id}`);
    return mp;
  }

  #requireHandle(mp: ManagedProcess): ProcessHandle {
    if (!mp.proc) throw invalidRequest(`process ${mp.id} is still starting`);
    return mp.proc.handle;
  }

  #onOutput(mp: ManagedProcess, stream: StreamName, data: Uint8Array): void {
    if (mp.merge.stream !== undefined && mp.merge.stream !== stream) this.#flush(mp);
    mp.merge.add(stream, data, () => this.#flush(mp));
    if (mp.merge.bytes > 0) this.#pacer.merged(mp);
  }

  /** Turn a process's merged output into one numbered chunk and notify it. */
  #flush(mp: ManagedProcess): void {
    const taken = mp.merge.take();
    if (!taken) return;
    this.#pacer.flushed(mp, taken.data.byteLength);
    const { stream, data } = taken;
    const chunk = mp.output.append(stream, data);
    if (mp.waiters.size > 0) mp.wake();
    // Encoded now, while the merge buffer still holds these bytes.
    if (!this.#closed) this.#send(mp, outputNote(mp.idJson, stream, data, chunk.seq));
  }

  #onFinished(mp: ManagedProcess, exit: TimedExit): void {
    this.#flush(mp);
    mp.merge.release();
    mp.exit = exit;
    serverIdleCollector.exited();
    this.#opts.logger.debug(`process ${mp.id} exited ${exit.exitCode} ${exit.signal ?? ""}`);
    mp.wake();
    if (!this.#closed) {
      const notes = this.#dialect.exitNotes(
        mp.id,
        mp.proc!.startedAtMs,
        exit,
        () => mp.output.reserveSeq(),
      );
      for (const note of notes) this.#send(mp, note);
    }
    if (this.#closed) return;
    this.#exited.add(mp, mp.output.retainedBytes);
  }

  #send(mp: ManagedProcess, text: string): void {
    if (this.#closed) return;
    if (!mp.announced) {
      mp.pendingNotes.push(text);
      return;
    }
    if (!this.#sink.send(text)) this.#pauseAll();
  }

  #announce(mp: ManagedProcess): void {
    mp.announced = true;
    const notes = mp.pendingNotes;
    mp.pendingNotes = [];
    for (const text of notes) {
      if (this.#closed) return;
      if (!this.#sink.send(text)) this.#pauseAll();
    }
  }

  #pauseAll(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#opts.logger.debug("client is slow: pausing process output");
    for (const mp of this.#procs.values()) if (mp.running) mp.proc?.handle.pause();
  }

  #resumeAll(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#opts.logger.debug("client caught up: resuming process output");
    for (const mp of this.#procs.values()) if (mp.running) mp.proc?.handle.resume();
  }
}

/** A write the runtime abandoned because its descriptor was closed (Deno: ECANCELED). */
function isCancelled(err: unknown): boolean {
  return (err as { code?: string }).code === "ECANCELED";
}
