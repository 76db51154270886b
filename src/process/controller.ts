/**
 * The process control both owners share, the server's process table and
 * the client's local environment: start with one error mapping, time the
 * exit itself (not the wait for its output), and kill a tree gracefully
 * or at once.
 *
 * @module
 */
import { OutputTail, sandboxDenied } from "./sandbox/denial.ts";
import { sandboxArgv, sandboxedHandle, SandboxUnavailableError } from "./sandbox/launch.ts";
import { SpawnCheckError } from "./spawn_checks.ts";
import { spawnProcess } from "./spawn.ts";
import type { ExitStatus, ProcessHandle, SpawnRequest } from "./types.ts";
import type { TerminalSize } from "../protocol/methods.ts";
import type { SandboxPolicy } from "../protocol/sandbox_policy.ts";

/** What to start, as both owners describe it (defaults applied by {@linkcode startControlled}). */
export interface StartSpec {
  /** Program and arguments. */
  argv: string[];
  /** The `argv[0]` the child sees, when it differs (pipes only). */
  arg0?: string | null;
  /** Absolute working directory. */
  cwd: string;
  /** The entire environment. */
  env: Record<string, string>;
  /** PTY or pipes. */
  tty: boolean;
  /** Keep stdin of a pipe process open (default false). */
  pipeStdin?: boolean;
  /** Initial terminal size (default 24x80). */
  size?: TerminalSize;
  /** Run inside a bubblewrap sandbox with these permissions (default: none). */
  sandbox?: SandboxPolicy | null;
}

/** The terminal size a PTY gets when none is given. */
export const DEFAULT_TERMINAL_SIZE: Readonly<TerminalSize> = Object.freeze({ rows: 24, cols: 80 });

/** An exit with its timing. */
export interface TimedExit extends ExitStatus {
  /** When it exited, in ms since the epoch. */
  exitedAtMs: number;
  /** From start to exit, in ms (microsecond precision). */
  durationMs: number;
  /**
   * Sandboxed processes only: whether the failure looks like the sandbox's
   * doing (see sandbox/denial.ts for the rule).
   */
  sandboxDenied?: boolean;
}

/** Thrown when a process cannot be started. */
export class SpawnFailedError extends Error {
  /**
   * The errno of a check that failed before anything ran (ENOENT for a
   * missing program, ENOTDIR for a bad cwd, ...), else undefined.
   */
  readonly errno: string | undefined;
  /** The runtime's error code when the spawn itself failed, if any. */
  readonly code: string | undefined;
  /** Whether a sandbox was asked for and this host cannot provide one. */
  readonly sandboxUnavailable: boolean;

  /** @param cause what went wrong */
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = "SpawnFailedError";
    this.errno = cause instanceof SpawnCheckError ? cause.errno : undefined;
    this.code = (cause as { code?: string } | null)?.code;
    this.sandboxUnavailable = cause instanceof SandboxUnavailableError;
  }
}

/**
 * Start a process under control.
 *
 * @example
 * ```ts
 * import { startControlled } from "./controller.ts";
 * const p = await startControlled(
 *   { argv: ["sleep", "10"], cwd: "/", env: { PATH: "/usr/bin:/bin" }, tty: false },
 *   { drainQuietMs: 250, onOutput: () => {} },
 * );
 * p.kill(500); // SIGTERM now, SIGKILL after 500 ms if it is still running
 * console.log(await p.finished); // { exitCode: 143, signal: "SIGTERM", ... }
 * ```
 * @throws {SpawnFailedError} when it cannot be started
 */
export async function startControlled(
  spec: StartSpec,
  output: Pick<SpawnRequest, "drainQuietMs" | "onOutput">,
): Promise<ControlledProcess> {
  const startedAt = performance.now();
  const startedAtMs = Date.now();
  const policy = spec.sandbox ?? undefined;
  const tail = policy ? new OutputTail() : undefined;
  let handle: ProcessHandle;
  try {
    handle = await spawnProcess({
      argv: policy ? await sandboxArgv(spec, policy) : spec.argv,
      // Inside a sandbox bubblewrap sets it.
      arg0: policy ? null : spec.arg0,
      cwd: spec.cwd,
      env: spec.env,
      tty: spec.tty,
      pipeStdin: spec.pipeStdin ?? false,
      size: spec.size ?? DEFAULT_TERMINAL_SIZE,
      drainQuietMs: output.drainQuietMs,
      onOutput: tail
        ? (stream, chunk) => {
          tail.push(chunk);
          output.onOutput(stream, chunk);
        }
        : output.onOutput,
    });
  } catch (err) {
    throw new SpawnFailedError(err);
  }
  if (!policy) return new ControlledProcess(handle, startedAt, startedAtMs);
  return new ControlledProcess(
    sandboxedHandle(handle),
    startedAt,
    startedAtMs,
    (status) => sandboxDenied(status, tail!.text(), policy.network),
  );
}

/** A started process: its handle, its timed exit, and kill escalation. */
export class ControlledProcess {
  /** The backend's handle (write, resize, signal, ...). */
  readonly handle: ProcessHandle;
  /** When it started, in ms since the epoch. */
  readonly startedAtMs: number;
  /** Resolves once it exited and its output was read to the end. */
  readonly finished: Promise<TimedExit>;
  #exit: TimedExit | undefined;
  #graceTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param handle the started process; @param startedAt its start on the
   * performance clock; @param denied for a sandboxed process, the rule
   * that tells whether its failure was the sandbox's doing
   */
  constructor(
    handle: ProcessHandle,
    startedAt: number,
    startedAtMs: number,
    denied?: (status: ExitStatus) => boolean,
  ) {
    this.handle = handle;
    this.startedAtMs = startedAtMs;
    this.finished = handle.finished.then((status) => {
      this.#stopGrace();
      // Time the exit itself, not the end of the wait for its output.
      const now = performance.now();
      const at = status.exitedAt ?? now;
      this.#exit = {
        ...status,
        exitedAtMs: Math.round(Date.now() - (now - at)),
        durationMs: Math.round((at - startedAt) * 1000) / 1000,
        ...(denied ? { sandboxDenied: denied(status) } : {}),
      };
      return this.#exit;
    });
  }

  /** Whether it is still running (its exit has not been reported yet). */
  get running(): boolean {
    return this.#exit === undefined;
  }

  /** The exit, once reported. */
  get exit(): TimedExit | undefined {
    return this.#exit;
  }

  /**
   * Kill the whole tree: SIGKILL at once, or SIGTERM and then SIGKILL
   * after `graceMs` if it is still running.
   */
  kill(graceMs?: number): Promise<void> {
    if (graceMs === undefined || graceMs <= 0) return this.handle.killTree("SIGKILL");
    this.#stopGrace();
    this.#graceTimer = setTimeout(() => {
      this.#graceTimer = undefined;
      if (this.running) void this.handle.killTree("SIGKILL");
    }, graceMs);
    return this.handle.killTree("SIGTERM");
  }

  /** Cancel a pending SIGKILL (the owner is shutting down anyway). */
  dispose(): void {
    this.#stopGrace();
  }

  #stopGrace(): void {
    if (this.#graceTimer !== undefined) clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
  }
}
