/**
 * Codex-dialect sessions outlive their connection: when it drops, the
 * processes keep running and their output is retained (within the usual
 * bounds) for a grace period, during which a new connection may resume the
 * session with its id and read what it missed. After the grace period the
 * session ends as a v0 connection's would: every process tree is killed.
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

/** One Codex-dialect session: its processes, file watches and handlers. */
export class ResumableSession {
  /** The unguessable id a client resumes with. */
  readonly id: string = crypto.randomUUID();
  /** The session's processes. */
  readonly table: ProcessTable;
  /** Its method handlers. */
  readonly handlers: Map<string, MethodHandler>;
  #sink = new SwitchableSink();
  #watches: MissingWatches;
  #http: HttpRequests;
  #handles = sessionFileHandles();
  #attached = false;
  #graceTimer: ReturnType<typeof setTimeout> | undefined;

  /** @param opts the server's settings for this session */
  constructor(opts: ServerOptions) {
    this.table = new ProcessTable(opts, this.#sink, CODEX_DIALECT);
    this.#watches = new MissingWatches((watchId) => {
      this.#sink.send(
        JSON.stringify({ method: CodexNotificationNames.fsMissingChanged, params: { watchId } }),
      );
    });
    const fs = new LocalFileSystem({ maxReadFileBytes: opts.maxReadFileBytes });
    this.#http = new HttpRequests(this.#sink, {
      maxBufferedBytes: opts.maxReadFileBytes,
      readSandbox: readCodexSandbox,
    });
    this.handlers = new Map([
      ...processMethods(this.table),
      ...codexProcessMethods(this.table),
      ...codexFsMethods(fs, this.#watches),
      ...codexEnvironmentMethods(),
      ...this.#http.handlers(),
      ...fileHandleMethods(this.#handles, {
        readSandbox: readCodexSandbox,
        notFoundCode: NOT_FOUND_CODE,
      }),
    ]);
  }

  /** Whether a connection is attached. */
  get attached(): boolean {
    return this.#attached;
  }

  /** Attach `conn`: notifications go to it from now on. */
  attach(conn: FrameConnection): void {
    if (this.#graceTimer !== undefined) clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
    this.#attached = true;
    this.#sink.attach(conn);
  }

  /** The connection ended: keep running for `graceMs`, then `onExpired`. */
  detach(graceMs: number, onExpired: () => void): void {
    this.#attached = false;
    this.#sink.detach();
    // Nobody reads a stream whose connection is gone; the client asks again.
    this.#http.abortAll("the connection ended");
    this.#graceTimer = setTimeout(onExpired, graceMs);
  }

  /** End the session: kill every process tree, stop every watch. */
  async close(): Promise<void> {
    if (this.#graceTimer !== undefined) clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
    this.#watches.close();
    this.#http.abortAll("the session ended");
    // An abandoned replace handle leaves its target as it was.
    await this.#handles.discardAll();
    await this.table.closeAll();
  }
}

/** The server's resumable sessions, by id. */
export class SessionRegistry {
  #sessions = new Map<string, ResumableSession>();

  /** A new session, registered. */
  create(opts: ServerOptions): ResumableSession {
    const session = new ResumableSession(opts);
    this.#sessions.set(session.id, session);
    return session;
  }

  /**
   * The detached session `id`.
   *
   * @throws {RpcError} -32600 when it is unknown, expired or attached elsewhere
   */
  resume(id: string): ResumableSession {
    const session = this.#sessions.get(id);
    if (!session) throw invalidRequest(`unknown session id ${id}`);
    if (session.attached) {
      throw invalidRequest(`session ${id} is attached to another connection`);
    }
    return session;
  }

  /** Its connection ended: end it after `graceMs` unless resumed. */
  detach(session: ResumableSession, graceMs: number): void {
    session.detach(graceMs, () => {
      this.#sessions.delete(session.id);
      void session.close();
    });
  }

  /** Every session, attached or not (for shutdown). */
  get sessions(): ResumableSession[] {
    return [...this.#sessions.values()];
  }

  /** End every session at once. */
  async closeAll(): Promise<void> {
    const sessions = this.sessions;
    this.#sessions.clear();
    await Promise.all(sessions.map((s) => s.close()));
  }
}
