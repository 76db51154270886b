/**
 * Pipe-backed processes: separate stdout and stderr, stdin closed unless
 * asked for, each child in a session (and process group) of its own.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import type { StreamName, TerminalSize } from "../protocol/methods.ts";
import { ExitDrain } from "./exit_drain.ts";
import { exitStatusOf } from "./signals.ts";
import { ProcessGroup } from "./kill_tree.ts";
import { checkCwd, resolveProgram, SpawnCheckError } from "./spawn_checks.ts";
import {
  type ExitStatus,
  NotATerminalError,
  type ProcessHandle,
  type SpawnRequest,
  StdinClosedError,
} from "./types.ts";
import { constants } from "node:os";

/**
 * Start a child on pipes. Resolves once the child exists.
 *
 * @throws {SpawnCheckError} when the program or cwd cannot be used
 */
export async function spawnPipeProcess(req: SpawnRequest): Promise<ProcessHandle> {
  const child = spawn(req.argv[0], req.argv.slice(1), {
    cwd: req.cwd,
    env: req.env,
    argv0: req.arg0 ?? req.argv[0],
    detached: true,
    stdio: [req.pipeStdin ? "pipe" : "ignore", "pipe", "pipe"],
    windowsHide: true,
  });
  const failure = await new Promise<(Error & { code?: string }) | undefined>((resolve) => {
    const onError = (err: Error & { code?: string }) => {
      child.off("spawn", onSpawn);
      resolve(err);
    };
    const onSpawn = () => {
      child.off("error", onError);
      resolve(undefined);
    };
    child.once("error", onError);
    child.once("spawn", onSpawn);
  });
  if (failure) {
    // The spawn error does not say whether the program or the cwd was the
    // problem; the checks run only now, off the common path, to say which.
    await checkCwd(req.cwd);
    await resolveProgram(req.argv[0], req.env, req.cwd);
    const errno = failure.code ?? "EIO";
    throw new SpawnCheckError(`${req.argv[0]} could not be started (${errno})`, errno);
  }
  return new PipeProcess(child, req);
}

class PipeProcess implements ProcessHandle {
  readonly pid: number;
  readonly finished: Promise<ExitStatus>;
  #child: ChildProcess;
  #stdinOpen: boolean;
  #drain: ExitDrain;
  #outputs: Readable[];
  /** Signals reach the group, and after the reap only what was left of it. */
  #group: ProcessGroup;

  constructor(child: ChildProcess, req: SpawnRequest) {
    this.#child = child;
    this.pid = child.pid!;
    this.#group = new ProcessGroup(this.pid);
    this.#stdinOpen = req.pipeStdin && child.stdin !== null;
    // A child that exits without reading leaves EPIPE on later writes;
    // that is the write's failure to report, not a crash.
    child.stdin?.on("error", () => {
      this.#stdinOpen = false;
    });
    this.#outputs = [child.stdout!, child.stderr!];
    let resolveFinished!: (s: ExitStatus) => void;
    this.finished = new Promise((r) => resolveFinished = r);
    this.#drain = new ExitDrain(2, req.drainQuietMs, (status, forced) => {
      if (forced) { for (const s of this.#outputs) s.destroy(); }
      resolveFinished(status);
    });
    const watch = (stream: Readable, name: StreamName) => {
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        this.#drain.streamEnded();
      };
      stream.on("data", (chunk: Uint8Array) => {
        this.#drain.data();
        req.onOutput(name, chunk);
      });
      stream.on("end", end);
      stream.on("close", end);
      stream.on("error", end);
    };
    watch(child.stdout!, "stdout");
    watch(child.stderr!, "stderr");
    child.on("exit", (code, signal) => {
      this.#stdinOpen = false;
      this.#group.reaped();
      this.#drain.exit(exitStatusOf(code ?? 0, signal ? constants.signals[signal] : undefined));
    });
  }

  get stdinOpen(): boolean {
    return this.#stdinOpen;
  }

  write(data: Uint8Array): Promise<void> {
    const stdin = this.#child.stdin;
    if (!this.#stdinOpen || !stdin) {
      return Promise.reject(new StdinClosedError(this.pid));
    }
    return new Promise((resolve, reject) => {
      stdin.write(data, (err) => err ? reject(err) : resolve());
    });
  }

  closeStdin(): Promise<void> {
    const stdin = this.#child.stdin;
    if (!this.#stdinOpen || !stdin) {
      return Promise.reject(new StdinClosedError(this.pid));
    }
    this.#stdinOpen = false;
    return new Promise((resolve) => stdin.end(() => resolve()));
  }

  resize(_size: TerminalSize): void {
    throw new NotATerminalError(this.pid);
  }

  signal(signal: string): void {
    this.#group.signal(signal);
  }

  async killTree(signal: string): Promise<void> {
    await this.#group.killTree(signal);
  }

  pause(): void {
    for (const s of this.#outputs) s.pause();
    this.#drain.pause();
  }

  resume(): void {
    for (const s of this.#outputs) s.resume();
    this.#drain.resume();
  }
}
