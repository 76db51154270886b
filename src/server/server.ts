/**
 * The server: options, the set of live sessions, and shutdown. Transports
 * hand it connections; it never knows which transport a session uses.
 *
 * @module
 */
import type { FrameConnection } from "../rpc/connection.ts";
import { resolveServerOptions, type ServerOptions } from "./options.ts";
import type { MethodHandler } from "./process_methods.ts";
import { SessionRegistry } from "./resumable.ts";
import { Session } from "./session.ts";
import { SessionSockets } from "./session_sockets.ts";

/**
 * Serves any number of connections with shared options.
 *
 * @example
 * ```ts
 * import { ExecServer } from "./server.ts";
 * import { StdioConnection } from "../transport/stdio.ts";
 * const server = new ExecServer({ maxProcesses: 64 });
 * await server.serve(new StdioConnection(Deno.stdin.readable, Deno.stdout.writable));
 * ```
 */
export class ExecServer {
  /** The resolved options. */
  readonly options: ServerOptions;
  #sessions = new Set<Session>();
  /** Resumable sessions, which outlive their connections for a while. */
  #registry: SessionRegistry;
  #sockets: SessionSockets | undefined;
  #extraMethods: (() => Map<string, MethodHandler>) | undefined;
  #idle: (() => void)[] = [];

  /**
   * Create a server; it serves nothing until given connections.
   *
   * @param options overrides of the defaults
   * @param extraMethods builds additional method handlers per session
   */
  constructor(
    options: Partial<ServerOptions> = {},
    extraMethods?: () => Map<string, MethodHandler>,
  ) {
    this.options = resolveServerOptions(options);
    this.#extraMethods = extraMethods;
    const dir = this.options.sessionDir;
    // Other servers of this user reach the sessions through their sockets.
    this.#sockets = dir === undefined ? undefined : new SessionSockets({
      dir,
      serve: (conn) => this.serve(conn),
      highWaterBytes: this.options.outputHighWaterBytes,
      logger: this.options.logger,
    });
    this.#registry = new SessionRegistry(this.#sockets);
  }

  /** Whether other servers of this user can reach this one's sessions (a usable session directory). */
  sessionsReachable(): Promise<boolean> {
    return this.#registry.reachable();
  }

  /** The number of resumable sessions held, attached or not. */
  get sessionCount(): number {
    return this.#registry.size;
  }

  /**
   * Resolves once the server serves no connection and holds no session:
   * what an ended stdio server waits for before it exits, while its
   * sessions may still be resumed through their sockets.
   */
  async whenIdle(): Promise<void> {
    while (this.#sessions.size > 0 || this.#registry.size > 0) {
      if (this.#sessions.size > 0) {
        await new Promise<void>((resolve) => this.#idle.push(resolve));
      } else {
        await this.#registry.whenEmpty();
      }
    }
  }

  /** Live connections. */
  get connectionCount(): number {
    return this.#sessions.size;
  }

  /**
   * Serve one connection until it ends; its processes die with it.
   *
   * @param conn the connection
   * @param overrides options that differ for this connection only, such as
   * the lower limits a transport with smaller messages needs; they are
   * also what this session announces in `initialize`
   */
  async serve(conn: FrameConnection, overrides?: Partial<ServerOptions>): Promise<void> {
    const options = overrides ? withOverrides(this.options, overrides) : this.options;
    const session = new Session(conn, options, this.#extraMethods?.(), this.#registry);
    this.#sessions.add(session);
    try {
      await session.run();
    } finally {
      this.#sessions.delete(session);
      for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  /**
   * End every Codex-dialect session now, as its grace period would: its
   * process trees are killed and its abandoned file handles discarded. For
   * stdio, whose one connection nobody can resume once it has ended.
   */
  async endSessions(): Promise<void> {
    await this.#registry.closeAll();
  }

  /**
   * Stop every session's processes: SIGTERM to each tree, SIGKILL to what
   * is left after `graceMs`.
   */
  async shutdown(graceMs: number): Promise<void> {
    const tables = new Set([
      ...[...this.#sessions].map((s) => s.processes),
      ...this.#registry.sessions.map((s) => s.table),
    ]);
    await Promise.all([...tables].map((t) => t.terminateAll(graceMs)));
    await this.#registry.closeAll();
  }
}

/** `base` with the defined fields of `overrides` (an undefined one keeps `base`'s value). */
function withOverrides(base: ServerOptions, overrides: Partial<ServerOptions>): ServerOptions {
  const defined = Object.entries(overrides).filter(([, value]) => value !== undefined);
  return { ...base, ...Object.fromEntries(defined) };
}
