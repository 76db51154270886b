/**
 * Sessions that outlive their connection (the Codex dialect's, and v0's
 * when the client asks for one): when it drops, the processes keep running
 * and their output is retained (within the usual count and byte bounds,
 * but with no clock running on exited processes) while a new connection
 * may resume the session with its id and read what it missed. A process
 * lives for its own `ttlMs` (v0) or the grace period; when every one of
 * those has run out with nobody attached, the session ends as a v0
 * connection's would: every process tree is killed.
 *
 * @module
 */
import { LocalFileSystem } from "../fs/local.ts";
import { CodexNotificationNames, NOT_FOUND_CODE } from "../protocol/codex.ts";
import { invalidRequest } from "../protocol/errors.ts";
import type { FrameConnection } from "../rpc/connection.ts";
import { codexEnvironmentMethods } from "./codex_environment_methods.ts";
import { codexFsMethods, readCodexSandbox } from "./codex_fs_methods.ts";
import { HttpRequests } from "./http_methods.ts";
import { fileHandleMethods, sessionFileHandles } from "./file_handle_methods.ts";
import { codexProcessMethods } from "./codex_process_methods.ts";
import { CODEX_DIALECT } from "./dialect.ts";
import type { MethodHandler } from "./method_handlers.ts";
import { MissingWatches } from "./missing_watch.ts";
import type { ServerOptions } from "./options.ts";
import { processMethods } from "./process_methods.ts";
import { type NotificationSink, ProcessTable } from "./process_table.ts";
import { Method } from "../protocol/methods.ts";
import { V0_DIALECT } from "./dialect.ts";
import { v0Http, v0Methods } from "./v0_methods.ts";

/** Which dialect a session speaks: fixed by the `initialize` that opened it. */
export type SessionKind = "codex" | "v0";

/**
 * The process table's sink, pointed at whichever connection is attached.
 * With none, notifications are dropped (the client re-reads them with
 * `process/read` after resuming) and output is never held back.
 */
class SwitchableSink implements NotificationSink {
  #conn: FrameConnection | undefined;
  #drainListeners: (() => void)[] = [];

  send(text: string): boolean {
    return this.#conn ? this.#conn.send(text) : true;
  }

  onDrain(listener: () => void): void {
    this.#drainListeners.push(listener);
  }

  attach(conn: FrameConnection): void {
    this.#conn = conn;
    conn.onDrain(() => {
      if (this.#conn === conn) this.#drained();
    });
  }

  detach(): void {
    this.#conn = undefined;
    // Paused processes would wait for a drain that no connection brings.
    this.#drained();
  }

  #drained(): void {
    for (const listener of this.#drainListeners) listener();
  }
}

/** One resumable session: its processes, file watches and handlers. */
export class ResumableSession {
  /** The unguessable id a client resumes with. */
  readonly id: string = crypto.randomUUID();
  /** The dialect it speaks. */
  readonly kind: SessionKind;
  /** The session's processes. */
  readonly table: ProcessTable;
  /** Its method handlers. */
  readonly handlers: Map<string, MethodHandler>;
  #sink = new SwitchableSink();
  #watches: MissingWatches | undefined;
  #http: HttpRequests;
  #handles = sessionFileHandles();
  #attached = false;
  /** While detached: the session's end, and each process's own end. */
  #timers: ReturnType<typeof setTimeout>[] = [];

  /** @param opts the server's settings for this session */
  constructor(opts: ServerOptions, kind: SessionKind = "codex") {
    this.kind = kind;
    if (kind === "v0") {
      this.table = new ProcessTable(opts, this.#sink, V0_DIALECT);
      this.#http = v0Http(this.#sink, opts);
      const parts = { table: this.table, http: this.#http, handles: this.#handles };
      this.handlers = v0Methods({ ...parts, maxTtlMs: opts.maxTtlMs }, opts);
      return;
    }
    this.table = new ProcessTable(opts, this.#sink, CODEX_DIALECT);
    const watches = new MissingWatches((watchId) => {
      this.#sink.send(
        JSON.stringify({ method: CodexNotificationNames.fsMissingChanged, params: { watchId } }),
      );
    });
    this.#watches = watches;
    const fs = new LocalFileSystem({ maxReadFileBytes: opts.maxReadFileBytes });
    this.#http = new HttpRequests(this.#sink, {
      maxBufferedBytes: opts.maxReadFileBytes,
      readSandbox: readCodexSandbox,
    });
    this.handlers = new Map([
      ...processMethods(this.table),
      ...codexProcessMethods(this.table),
      ...codexFsMethods(fs, watches),
      ...codexEnvironmentMethods(),
      ...this.#http.handlers(),
      ...fileHandleMethods(this.#handles, {
        readSandbox: readCodexSandbox,
        notFoundCode: NOT_FOUND_CODE,
      }),
    ]);
    // Upstream has no process/list: the Codex dialect answers it -32601.
    this.handlers.delete(Method.ProcessList);
  }

  /** Whether a connection is attached. */
  get attached(): boolean {
    return this.#attached;
  }

  /** Attach `conn`: notifications go to it from now on. */
  attach(conn: FrameConnection): void {
    this.#stopTimers();
    this.#attached = true;
    this.table.holdExited(false);
    this.#sink.attach(conn);
  }

  /**
   * The connection ended: each running process keeps running for its own
   * `ttlMs` or else `graceMs`, then its tree is killed; once the longest of
   * those has passed with nobody attached, `onExpired`.
   */
  detach(graceMs: number, onExpired: () => void): void {
    this.#attached = false;
    this.#sink.detach();
    this.table.holdExited(true);
    // Nobody reads a stream whose connection is gone; the client asks again.
    this.#http.abortAll("the connection ended");
    const endMs = Math.max(graceMs, this.table.longestTtlMs);
    for (const [id, ttlMs] of this.table.runningTtls()) {
      const ms = ttlMs ?? graceMs;
      if (ms < endMs) this.#timers.push(setTimeout(() => this.table.terminate(id), ms));
    }
    this.#timers.push(setTimeout(onExpired, endMs));
  }

  /** End the session: kill every process tree, stop every watch. */
  async close(): Promise<void> {
    this.#stopTimers();
    this.#watches?.close();
    this.#http.abortAll("the session ended");
    // An abandoned replace handle leaves its target as it was.
    await this.#handles.discardAll();
    await this.table.closeAll();
  }

  #stopTimers(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers = [];
  }
}

/**
 * What makes a registry's sessions reachable from outside this server (the
 * session sockets): told when each session opens and ends.
 */
export interface SessionHost {
  /** `session` exists from now on. */
  opened(session: ResumableSession): void;
  /** `session` ended: nobody can resume it any more. */
  ended(session: ResumableSession): void;
  /** Whether sessions can be reached from other servers (their directory is usable). */
  reachable(): Promise<boolean>;
}

/** The server's resumable sessions, by id. */
export class SessionRegistry {
  #sessions = new Map<string, ResumableSession>();
  #host: SessionHost | undefined;
  #emptied: (() => void)[] = [];

  /** @param host told of every session that opens and ends */
  constructor(host?: SessionHost) {
    this.#host = host;
  }

  /** A new session, registered. */
  create(opts: ServerOptions, kind: SessionKind = "codex"): ResumableSession {
    const session = new ResumableSession(opts, kind);
    this.#sessions.set(session.id, session);
    this.#host?.opened(session);
    return session;
  }

  /** Whether other servers of this user can reach the sessions (and so resume them). */
  reachable(): Promise<boolean> {
    return this.#host?.reachable() ?? Promise.resolve(false);
  }

  /** Whether this server holds session `id`. */
  has(id: string): boolean {
    return this.#sessions.has(id);
  }

  /**
   * The detached session `id`.
   *
   * @throws {RpcError} -32600 when it is unknown, expired, of the other
   * dialect, or attached elsewhere
   */
  resume(id: string, kind: SessionKind = "codex"): ResumableSession {
    const session = this.#sessions.get(id);
    if (!session) throw invalidRequest(`unknown session id ${id}`);
    if (session.kind !== kind) {
      throw invalidRequest(
        `session ${id} was opened in the ${session.kind} dialect and cannot be resumed in the ${kind} one`,
      );
    }
    if (session.attached) {
      throw invalidRequest(`session ${id} is attached to another connection`);
    }
    return session;
  }

  /** Its connection ended: end it when its processes' time is up, unless resumed. */
  detach(session: ResumableSession, graceMs: number): void {
    session.detach(graceMs, () => void this.#end(session));
  }

  /** Every session, attached or not (for shutdown). */
  get sessions(): ResumableSession[] {
    return [...this.#sessions.values()];
  }

  /** The number of sessions held. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Resolves once no session is left (at once when there is none). */
  whenEmpty(): Promise<void> {
    if (this.#sessions.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#emptied.push(resolve));
  }

  /** End every session at once. */
  async closeAll(): Promise<void> {
    await Promise.all(this.sessions.map((s) => this.#end(s)));
  }

  async #end(session: ResumableSession): Promise<void> {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    this.#host?.ended(session);
    await session.close();
    if (this.#sessions.size === 0) { for (const resolve of this.#emptied.splice(0)) resolve(); }
  }
}
