/**
 * The commands the MCP tools started, by session id: each one's unread
 * output (bounded head and tail), its exit once it has one, and waits that
 * end at the exit, at the call's yield, or at its cancellation — whichever
 * comes first. A wait never ends the command, and output is taken only by
 * a call that answers: a cancelled call leaves it for the next.
 *
 * @module
 */
import type { ExecProcess, ProcessExit, SpawnedProcess } from "../client/process_handle.ts";
import { AnsiStripper } from "../util/strip_ansi.ts";
import { OutputWindow, type WindowRead } from "./output_window.ts";
import { ToolInputError } from "./tool_args.ts";

/** What to start. */
export interface CommandRequest {
  /** Program and arguments. */
  argv: string[];
  /** Absolute working directory. */
  cwd: string;
  /** The whole environment. */
  env: Record<string, string>;
  /** On a terminal (stdin open for `write_stdin`), or pipes with stdin closed. */
  tty: boolean;
  /** How the command is shown in `list_sessions`. */
  display: string;
}

/** A wait's outcome: the output read and whether the command has ended. */
export interface CommandPoll extends WindowRead {
  /** The session, while it stays listed (running, or ended with output unread). */
  sessionId: number;
  /** The exit, once the command has ended and all its output was read. */
  exit: ProcessExit | undefined;
  /** How long the command has run, in ms. */
  elapsedMs: number;
}

/** Options of {@linkcode ExecSessions}. */
export interface ExecSessionsOptions {
  /** Strip terminal escape sequences from tty output (default false). */
  stripAnsi?: boolean;
  /** Bytes of unread head and of unread tail kept per session. */
  keepBytes?: number;
  /** Ended sessions with unread output kept; the oldest is dropped first (default 64). */
  maxEnded?: number;
}

/** One command and its unread output. */
class CommandSession {
  readonly id: number;
  readonly request: CommandRequest;
  readonly process: SpawnedProcess;
  readonly startedAt = Date.now();
  /** Resolves once the command has exited and its output is all in the window. */
  readonly finished: Promise<void>;
  exit: ProcessExit | undefined;
  endedAt: number | undefined;
  #window: OutputWindow;
  #stripper: AnsiStripper | undefined;
  #encoder = new TextEncoder();

  constructor(id: number, request: CommandRequest, process: SpawnedProcess, options: {
    stripAnsi: boolean;
    keepBytes?: number;
  }) {
    this.id = id;
    this.request = request;
    this.process = process;
    this.#window = new OutputWindow(options.keepBytes);
    this.#stripper = options.stripAnsi && request.tty ? new AnsiStripper() : undefined;
    this.finished = this.#pump();
  }

  get unreadBytes(): number {
    return this.#window.size;
  }

  read(capBytes: number): WindowRead {
    // The stripper holds a line back until it ends (a later \r may redraw
    // it); a prompt that waits for input never ends it, so let it out now.
    if (this.#stripper) this.#window.push(this.#encoder.encode(this.#stripper.flush()));
    return this.#window.read(capBytes);
  }

  async #pump(): Promise<void> {
    const stripper = this.#stripper;
    const decoder = new TextDecoder();
    const encoder = this.#encoder;
    try {
      const reader = this.process.output.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        if (!stripper) this.#window.push(r.value.data);
        else {
          const text = stripper.push(decoder.decode(r.value.data, { stream: true }));
          this.#window.push(encoder.encode(text));
        }
      }
      if (stripper) {
        this.#window.push(encoder.encode(stripper.push(decoder.decode()) + stripper.flush()));
      }
      this.exit = await this.process.wait();
    } catch (err) {
      // The connection to the host failed: the command's fate is unknown.
      const why = err instanceof Error ? err.message : String(err);
      this.#window.push(encoder.encode(`\n[exec-server: lost the command: ${why}]\n`));
      this.exit = { exitCode: -1, signal: null, durationMs: Date.now() - this.startedAt };
    }
    this.endedAt = Date.now();
  }
}

/** The sessions of one MCP server (shared by all its clients). */
export class ExecSessions {
  #process: ExecProcess;
  #sessions = new Map<number, CommandSession>();
  #owners = new WeakMap<CommandSession, object>();
  #nextId = 1;
  #stripAnsi: boolean;
  #keepBytes: number | undefined;
  #maxEnded: number;

  /** @param process where commands run (an environment's `process`) */
  constructor(process: ExecProcess, options: ExecSessionsOptions = {}) {
    this.#process = process;
    this.#stripAnsi = options.stripAnsi ?? false;
    this.#keepBytes = options.keepBytes;
    this.#maxEnded = options.maxEnded ?? 64;
  }

  /**
   * Start a command; its output is kept from the first byte. `owner` (an
   * MCP connection) ends it with {@linkcode ExecSessions.closeOwner}.
   */
  async start(request: CommandRequest, owner?: object): Promise<number> {
    const process = await this.#process.spawn({
      argv: request.argv,
      cwd: request.cwd,
      env: request.env,
      tty: request.tty,
      // Pipes get no stdin at all: nothing to wait on, nothing inherited.
      pipeStdin: false,
    });
    const id = this.#nextId++;
    const session = new CommandSession(id, request, process, {
      stripAnsi: this.#stripAnsi,
      keepBytes: this.#keepBytes,
    });
    this.#sessions.set(id, session);
    if (owner) this.#owners.set(session, owner);
    session.finished.then(() => this.#dropOldEnded());
    return id;
  }

  /**
   * Kill the trees of `owner`'s commands that still run (its connection
   * ended); what they printed stays readable for the other connections.
   */
  async closeOwner(owner: object): Promise<void> {
    const owned = [...this.#sessions.values()].filter((s) => this.#owners.get(s) === owner);
    await Promise.all(owned.map(async (s) => {
      if (s.exit === undefined) await s.process.terminate().catch(() => false);
      await s.finished;
    }));
  }

  /**
   * Wait until the command ends or `yieldMs` pass, then take its unread
   * output. Returns undefined, taking nothing, when `signal` aborts first.
   */
  async poll(
    id: number,
    yieldMs: number,
    capBytes: number,
    signal?: AbortSignal,
  ): Promise<CommandPoll | undefined> {
    const session = this.#get(id);
    await waitFor(session.finished, yieldMs, signal);
    if (signal?.aborted) return undefined;
    const read = session.read(capBytes);
    const ended = session.exit !== undefined && session.unreadBytes === 0;
    if (ended) this.#sessions.delete(id);
    return {
      ...read,
      sessionId: id,
      exit: ended ? session.exit : undefined,
      elapsedMs: (session.endedAt ?? Date.now()) - session.startedAt,
    };
  }

  /** Type into a session's terminal. */
  async write(id: number, chars: string): Promise<void> {
    const session = this.#get(id);
    if (chars === "") return;
    if (session.exit !== undefined) {
      throw new ToolInputError(`session ${id} has ended: its stdin is closed`);
    }
    if (!session.request.tty) {
      throw new ToolInputError(
        `session ${id} runs without a tty, so its stdin is closed; ` +
          `run the command with tty: true to type into it`,
      );
    }
    await session.process.write(chars);
  }

  /** Send `signal` to the session's process group, or kill its whole tree. */
  async kill(id: number, signal?: string): Promise<void> {
    const session = this.#get(id);
    if (session.exit !== undefined) return;
    if (signal === undefined) await session.process.terminate({ graceMs: 2000 });
    else await session.process.signal(signal);
  }

  /** The sessions, oldest first. */
  list(): SessionSummary[] {
    return [...this.#sessions.values()].map((s) => ({
      session_id: s.id,
      command: s.request.display,
      tty: s.request.tty,
      running: s.exit === undefined,
      exit_code: s.exit?.exitCode ?? null,
      unread_bytes: s.unreadBytes,
      elapsed_ms: (s.endedAt ?? Date.now()) - s.startedAt,
    }));
  }

  /** Kill every running command's tree. */
  async close(): Promise<void> {
    await Promise.all([...this.#sessions.values()].map(async (s) => {
      if (s.exit === undefined) await s.process.terminate().catch(() => false);
      await s.finished;
    }));
    this.#sessions.clear();
  }

  #get(id: number): CommandSession {
    const session = this.#sessions.get(id);
    if (!session) {
      const known = [...this.#sessions.keys()].join(", ") || "none";
      throw new ToolInputError(
        `no session ${id} (sessions: ${known}); a session ends once its exit has been read`,
      );
    }
    return session;
  }

  /** Past `maxEnded` ended sessions, forget the oldest ones. */
  #dropOldEnded(): void {
    const ended = [...this.#sessions.values()].filter((s) => s.exit !== undefined);
    for (const s of ended.slice(0, Math.max(0, ended.length - this.#maxEnded))) {
      this.#sessions.delete(s.id);
    }
  }
}

/** One line of `list_sessions`. */
export interface SessionSummary {
  /** The id `write_stdin` and `kill_session` take. */
  session_id: number;
  /** The command as it was given. */
  command: string;
  /** Whether it runs on a terminal. */
  tty: boolean;
  /** Whether it still runs. */
  running: boolean;
  /** Its exit code once it has ended. */
  exit_code: number | null;
  /** Output not yet read. */
  unread_bytes: number;
  /** How long it has run (or ran), in ms. */
  elapsed_ms: number;
}

/** Wait for `done`, at most `ms`, and no longer than `signal` stays unaborted. */
function waitFor(done: Promise<void>, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", finish);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    signal?.addEventListener("abort", finish, { once: true });
    done.then(finish, finish);
  });
}
