/**
 * Pipe-backed processes: separate stdout and stderr, stdin closed unless
 * asked for, each child in a session (and process group) of its own.
 *
 * @module
 */
import type { StreamName, TerminalSize } from "../protocol/methods.ts";
import { type PipeChild, PipeSpawnError, spawnPipeChild } from "../runtime/pipe_child.ts";
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

const STREAMS: readonly StreamName[] = ["stdout", "stderr"];

/**
 * Start a child on pipes. Resolves once the child exists.
 *
 * @throws {SpawnCheckError} when the program or cwd cannot be used
 */
export async function spawnPipeProcess(req: SpawnRequest): Promise<ProcessHandle> {
  let child: PipeChild;
  try {
    child = await spawnPipeChild({
      argv: req.argv,
      arg0: req.arg0,
      cwd: req.cwd,
      env: req.env,
      stdin: req.pipeStdin,
    });
  } catch (err) {
    if (!(err instanceof PipeSpawnError)) throw err;
    // The spawn error does not say whether the program or the cwd was the
    // problem; the checks run only now, off the common path, to say which.
    await checkCwd(req.cwd);
    await resolveProgram(req.argv[0], req.env, req.cwd);
    throw new SpawnCheckError(err.message, err.code);
  }
  return new PipeProcess(child, req);
}

class PipeProcess implements ProcessHandle {
  readonly pid: number;
  readonly finished: Promise<ExitStatus>;
  #child: PipeChild;
  #drain: ExitDrain;
  /** Signals reach the group, and after the reap only what was left of it. */
  #group: ProcessGroup;

  constructor(child: PipeChild, req: SpawnRequest) {
    this.#child = child;
    this.pid = child.pid;
    this.#group = new ProcessGroup(this.pid);
    let resolveFinished!: (s: ExitStatus) => void;
    this.finished = new Promise((r) => resolveFinished = r);
    this.#drain = new ExitDrain(2, req.drainQuietMs, (status, forced) => {
      if (forced) child.destroyOutputs();
      resolveFinished(status);
    });
    child.read({
      onChunk: (index, bytes) => {
        this.#drain.data();
        req.onOutput(STREAMS[index], bytes);
      },
      onEnd: () => this.#drain.streamEnded(),
    });
    void child.exited.then(({ code, signal }) => {
      this.#group.reaped();
      this.#drain.exit(
        exitStatusOf(code ?? 0, signal ? constants.signals[signal as "SIGINT"] : undefined),
      );
    });
  }

  get stdinOpen(): boolean {
    return this.#child.stdinOpen;
  }

  write(data: Uint8Array): Promise<void> {
    if (!this.#child.stdinOpen) return Promise.reject(new StdinClosedError(this.pid));
    return this.#child.write(data);
  }

  closeStdin(): Promise<void> {
    if (!this.#child.stdinOpen) return Promise.reject(new StdinClosedError(this.pid));
    return this.#child.closeStdin();
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
    this.#child.pause();
    this.#drain.pause();
  }

  resume(): void {
    this.#child.resume();
    this.#drain.resume();
  }
}
