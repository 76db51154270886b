/**
 * {@linkcode ExecProcess} on this machine, driving the process backends
 * directly (no server, no protocol) with the server's semantics: own
 * process group, whole-tree kills, exit code 128+N for signal N, output
 * drained before the exit is reported.
 *
 * @module
 */
import { normalizeSignal } from "../process/signals.ts";
import {
  type ControlledProcess,
  type SpawnFailedError,
  startControlled,
} from "../process/controller.ts";
import { NotATerminalError, type ProcessHandle, StdinClosedError } from "../process/types.ts";
import { ProcessError, SpawnError } from "./errors.ts";
import { createProcessHandle, type ExecProcess, type ProcessOps } from "./process_handle.ts";
import type { SpawnedProcess } from "./process_handle.ts";
import type { RunOptions, RunResult } from "./process_handle.ts";
import { runProcess } from "./run.ts";
import { DEFAULT_CWD, DEFAULT_ENV, processIdGenerator } from "./spawn_options.ts";
import { resolveSpawnOptions, type SandboxOptions, type SpawnOptions } from "./spawn_options.ts";

/** Options of {@linkcode LocalProcesses}. */
export interface LocalProcessesOptions {
  /** The working directory of processes started without one (default `/`). */
  defaultCwd?: string;
  /** The environment of processes started without one (default `{PATH}` only). */
  defaultEnv?: Record<string, string>;
  /**
   * After a child exits, how long its output may stay silent before the
   * streams are closed although a leftover grandchild holds them (default 250 ms).
   */
  exitDrainMs?: number;
  /**
   * The sandbox of processes started without a `sandbox` option (default
   * none). Needs bubblewrap on this machine.
   */
  sandbox?: SandboxOptions | null;
}

interface Live {
  proc: ControlledProcess | undefined;
  running: boolean;
}

/**
 * Processes on the local machine with the same handle as remote ones.
 *
 * @example
 * ```ts
 * import { LocalProcesses } from "./local_process.ts";
 * const local = new LocalProcesses({ defaultCwd: "/tmp" });
 * const { stdout } = await local.run(["echo", "hi"]);
 * await local.close();
 * ```
 */
export class LocalProcesses implements ExecProcess {
  #opts: LocalProcessesOptions;
  #nextId = processIdGenerator();
  #live = new Map<string, Live>();
  #closed = false;

  /** Create a process starter with the given defaults. */
  constructor(opts: LocalProcessesOptions = {}) {
    this.#opts = opts;
  }

  /**
   * Start a local process.
   *
   * @throws {SpawnError} when the program or cwd cannot be used (`errno` says why)
   * @throws {TypeError} for invalid options
   */
  async spawn(options: SpawnOptions): Promise<SpawnedProcess> {
    const o = resolveSpawnOptions(options, {
      cwd: this.#opts.defaultCwd ?? DEFAULT_CWD,
      env: this.#opts.defaultEnv ?? DEFAULT_ENV,
      sandbox: this.#opts.sandbox,
    });
    if (this.#closed) throw new SpawnError(o.argv, "the local environment is closed", undefined);
    const id = options.processId ?? this.#nextId();
    if (this.#live.has(id)) {
      throw new SpawnError(o.argv, `process id ${id} is already in use`, undefined);
    }
    const live: Live = { proc: undefined, running: true };
    this.#live.set(id, live);
    const { handle, sink } = createProcessHandle(id, o.argv, o.tty, this.#ops(id, live));
    let seq = 0;
    let proc: ControlledProcess;
    try {
      proc = await startControlled({ ...o, sandbox: o.sandboxPolicy }, {
        drainQuietMs: this.#opts.exitDrainMs ?? 250,
        // The bytes are only lent for the call (the read buffer is reused);
        // the copy is also a plain Uint8Array, like a remote chunk.
        onOutput: (stream, data) => sink.output({ stream, data: new Uint8Array(data), seq: ++seq }),
      });
    } catch (err) {
      this.#live.delete(id);
      const failure = err as SpawnFailedError;
      const cause = failure.cause ?? failure;
      throw new SpawnError(o.argv, failure.message, failure.errno ?? failure.code, { cause });
    }
    live.proc = proc;
    if (this.#closed) void proc.kill();
    proc.finished.then((exit) => {
      live.running = false;
      this.#live.delete(id);
      sink.exited({
        exitCode: exit.exitCode,
        signal: exit.signal,
        durationMs: exit.durationMs,
        ...(exit.sandboxDenied === undefined ? {} : { sandboxDenied: exit.sandboxDenied }),
      });
    });
    return handle;
  }

  /** Start a process, feed it `stdin`, and collect its output and exit. */
  run(command: string[] | SpawnOptions, options?: RunOptions): Promise<RunResult> {
    return runProcess(this, command, options);
  }

  /** Kill every running process tree started here and refuse new ones. */
  async close(): Promise<void> {
    this.#closed = true;
    const live = [...this.#live.values()];
    await Promise.all(live.map(async (l) => {
      if (l.proc) {
        l.proc.dispose();
        await l.proc.kill();
        await l.proc.finished;
      }
    }));
  }

  #ops(id: string, live: Live): ProcessOps {
    const fail = (operation: string, detail: string, cause?: unknown): ProcessError =>
      new ProcessError(id, operation, detail, { cause });
    const requireRunning = (operation: string): ProcessHandle => {
      if (!live.running || !live.proc) throw fail(operation, `process ${id} has exited`);
      return live.proc.handle;
    };
    return {
      write: async (data) => {
        // As on the server, an exited process's stdin counts as closed.
        const h = live.running ? live.proc?.handle : undefined;
        if (!h?.stdinOpen) throw fail("write", `stdin of process ${id} is closed`);
        try {
          await h.write(data);
        } catch (err) {
          if (err instanceof StdinClosedError) {
            throw fail("write", `stdin of process ${id} is closed`, err);
          }
          throw fail("write", String(err), err);
        }
      },
      closeStdin: async () => {
        const h = live.running ? live.proc?.handle : undefined;
        if (!h?.stdinOpen) throw fail("closeStdin", `stdin of process ${id} is closed`);
        try {
          await h.closeStdin();
        } catch (err) {
          throw fail("closeStdin", String(err), err);
        }
      },
      resize: (size) => {
        try {
          requireRunning("resize").resize(size);
        } catch (err) {
          if (err instanceof ProcessError) return Promise.reject(err);
          if (err instanceof NotATerminalError) {
            return Promise.reject(
              fail("resize", `process ${id} has no terminal (started with tty: false)`, err),
            );
          }
          return Promise.reject(fail("resize", String(err), err));
        }
        return Promise.resolve();
      },
      signal: (signal) => {
        try {
          const name = normalizeSignal(signal);
          requireRunning("signal").signal(name);
        } catch (err) {
          if (err instanceof ProcessError) return Promise.reject(err);
          return Promise.reject(fail("signal", err instanceof Error ? err.message : String(err)));
        }
        return Promise.resolve();
      },
      terminate: async (graceMs) => {
        if (!live.running || !live.proc) return false;
        await live.proc.kill(graceMs);
        return true;
      },
    };
  }
}
