/**
 * The exec-server client: one connection, its handshake and lifetime,
 * typed calls (from {@linkcode ProtocolCalls}), events, and processes as
 * handles whose output is never missed. Each way of connecting lives in
 * `connect/`.
 *
 * @module
 */
import { Notifications, Requests, type RequestType } from "../protocol/descriptors.ts";
import type { InitializeResult } from "../protocol/methods.ts";
import type { ProcessListEntry, SessionInfo } from "../protocol/sessions.ts";
import type { FrameConnection } from "../rpc/connection.ts";
import { PeerClosedError, RemoteError, RpcPeer } from "../rpc/peer.ts";
import type { FileSystem } from "../fs/types.ts";
import { deadline, within } from "../util/deadline.ts";
import { type ConnectionLifetime, startChildServer } from "./connect/child_server.ts";
import { describe, type OpenedConnection } from "./connect/opened.ts";
import { openSsh } from "./connect/ssh.ts";
import { openStdio } from "./connect/stdio.ts";
import { openWebSocket } from "./connect/websocket.ts";
import { attachProcess, sessionRequest, sshSessionOptions, withResume } from "./session_mode.ts";
import { ConnectError, ConnectionClosedError, InitializeTimeoutError } from "./errors.ts";
import { ServerError, SpawnError } from "./errors.ts";
import { NotificationHub } from "./notification_hub.ts";
import type { ClientOptions, ClosedInfo, ExitedEvent, OutputEvent } from "./options.ts";
import type { ServerNotification, SpawnStdioOptions } from "./options.ts";
import type { SshClientOptions, StdioClientOptions, WebSocketClientOptions } from "./options.ts";
import { createProcessHandle, type ExecProcess, type SpawnedProcess } from "./process_handle.ts";
import type { RunOptions, RunResult } from "./process_handle.ts";
import { runProcess } from "./run.ts";
import { DEFAULT_CWD, DEFAULT_ENV, processIdGenerator } from "./spawn_options.ts";
import { resolveSpawnOptions, type SpawnOptions } from "./spawn_options.ts";
import { startParams } from "./start_params.ts";
import { ProtocolCalls } from "./protocol_calls.ts";
import { remoteProcessOps } from "./remote_ops.ts";
import { RemoteFileSystem } from "./remote_fs.ts";

/** The name sent in `initialize` when the options give none. */
const DEFAULT_CLIENT_NAME = "exec-server-client";

/**
 * A connection to one exec-server. Every way of connecting completes the
 * `initialize` handshake (within `initializeTimeoutMs`) before resolving.
 *
 * @example
 * ```ts
 * import { ExecServerClient } from "../../mod.ts";
 * const client = await ExecServerClient.connectSsh("me@build-box");
 * const { exitCode, stdout } = await client.run(["uname", "-a"]);
 * const p = await client.spawn({ argv: ["sh", "-c", "echo hi; sleep 1"] });
 * for await (const chunk of p.output) console.log(chunk.stream, chunk.data);
 * console.log(await p.wait()); // { exitCode: 0, signal: null, durationMs: ... }
 * await client.close();
 * ```
 */
export class ExecServerClient extends ProtocolCalls implements ExecProcess {
  #conn: FrameConnection;
  #lifetime: ConnectionLifetime;
  #opts: ClientOptions;
  #peer: RpcPeer;
  #target: string;
  #init: InitializeResult = { protocolVersion: "" };
  #hub: NotificationHub;
  #sessionId: string | undefined;
  #nextProcessId = processIdGenerator();
  #endInfo: ClosedInfo | undefined;
  #readLoop: Promise<void>;
  #released: Promise<void> | undefined;
  #resolveClosed!: (info: ClosedInfo) => void;
  #fs: RemoteFileSystem;

  /** Resolves once the connection has ended and its resources were released. */
  readonly closed: Promise<ClosedInfo>;

  private constructor(conn: FrameConnection, opts: ClientOptions, lifetime: ConnectionLifetime) {
    super();
    this.#conn = conn;
    this.#opts = opts;
    this.#lifetime = lifetime;
    this.#target = lifetime.target ?? "the server";
    this.closed = new Promise((resolve) => this.#resolveClosed = resolve);
    this.#fs = new RemoteFileSystem(this);
    this.#hub = new NotificationHub((message) => this.#problem(message));
    this.#peer = new RpcPeer({
      send: (text) => {
        conn.send(text);
      },
      binaryFrames: conn.binaryFrames === true,
      onNotification: (method, params) => this.#hub.dispatch(method, params),
      onProblem: (message) => this.#problem(message),
    });
    this.#readLoop = this.#read();
  }

  /**
   * Connect over any {@linkcode FrameConnection} and complete the
   * handshake. `lifetime` ties the connection to what carries it.
   *
   * @throws {InitializeTimeoutError} when `initialize` is not answered in time
   * @throws {ConnectionClosedError} when the connection ends during the handshake
   * @throws {ServerError} when the server refuses `initialize`
   */
  static async connect(
    conn: FrameConnection,
    opts: ClientOptions = {},
    lifetime: ConnectionLifetime = {},
  ): Promise<ExecServerClient> {
    const client = new ExecServerClient(conn, opts, lifetime);
    try {
      await client.#handshake();
    } catch (err) {
      client.#end(`handshake failed: ${describe(err)}`, true);
      await client.#release();
      throw err;
    }
    return client;
  }

  /** Complete the handshake over an opened transport, releasing it on failure. */
  static async #connectOpened(
    opened: OpenedConnection,
    opts: ClientOptions,
  ): Promise<ExecServerClient> {
    try {
      return await ExecServerClient.connect(opened.connection, opts, opened.lifetime);
    } catch (err) {
      throw opened.handshakeFailure ? opened.handshakeFailure(err) : err;
    }
  }

  /**
   * Speak newline-delimited JSON over a pair of byte streams (e.g. the
   * pipes of a server you started yourself).
   */
  static connectStdio(
    readable: ReadableStream<Uint8Array>,
    writable: WritableStream<Uint8Array>,
    opts: StdioClientOptions = {},
  ): Promise<ExecServerClient> {
    return ExecServerClient.#connectOpened(openStdio(readable, writable, opts), opts);
  }

  /**
   * Connect to `exec-server --listen ws://...`.
   *
   * @example
   * ```ts
   * import { ExecServerClient } from "../../mod.ts";
   * const client = await ExecServerClient.connectWebSocket("ws://127.0.0.1:8765", {
   *   token: "secret",
   * });
   * ```
   * @throws {ConnectTimeoutError} when the socket does not open in `connectTimeoutMs`
   * @throws {ConnectError} when it fails to open (refused, 401, ...)
   */
  static async connectWebSocket(
    url: string,
    opts: WebSocketClientOptions = {},
  ): Promise<ExecServerClient> {
    const opened = await openWebSocket(url, opts);
    const reopen = () => openWebSocket(url, opts);
    const name = opts.clientName ?? DEFAULT_CLIENT_NAME;
    return await ExecServerClient.#connectOpened(withResume(opened, reopen, opts, name), opts);
  }

  /**
   * Start a server program locally and speak to it over its stdio. The
   * client owns the child: `close()` ends its stdin, waits up to
   * `closeTimeoutMs` for it to exit, then kills it.
   *
   * @example
   * ```ts
   * import { ExecServerClient } from "../../mod.ts";
   * const client = await ExecServerClient.spawnStdio("deno", ["run", "-A", "cli.ts"]);
   * ```
   * @throws {ConnectError} when the program cannot be started
   */
  static async spawnStdio(
    command: string,
    args: string[] = [],
    opts: SpawnStdioOptions = {},
  ): Promise<ExecServerClient> {
    const child = await startChildServer(command, args, opts);
    return await ExecServerClient.#connectOpened(child, opts);
  }

  /**
   * Run the server on another host with `ssh -T [sshArgs] -- destination
   * binary` and speak to it over ssh's stdio. Authentication is ssh's
   * business: keys, agent, `~/.ssh/config`.
   *
   * With `bootstrap`, the local binary is uploaded once to a per-version cache.
   *
   * @example
   * ```ts
   * import { ExecServerClient } from "../../mod.ts";
   * const client = await ExecServerClient.connectSsh("me@build-box", {
   *   sshArgs: ["-o", "BatchMode=yes"],
   *   resume: true, // a dropped ssh is started again and the session resumed
   * });
   * ```
   * @throws {BootstrapError} when bootstrapping fails (wrong platform, no space, ...)
   */
  static async connectSsh(
    destination: string,
    opts: SshClientOptions = {},
  ): Promise<ExecServerClient> {
    const sshOpts = sshSessionOptions(opts);
    const opened = await openSsh(destination, sshOpts);
    const reopen = () => openSsh(destination, sshOpts);
    const name = opts.clientName ?? DEFAULT_CLIENT_NAME;
    return await ExecServerClient.#connectOpened(withResume(opened, reopen, opts, name), opts);
  }

  /** The protocol version the server answered (`"exec-server.v0"`). */
  get protocolVersion(): string {
    return this.#init.protocolVersion;
  }

  /** **[ext]** Session mode: the session's id, its only credential (another client's `sessionId`). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** The server's name and version, when it says. */
  get serverInfo(): { name: string; version: string } | undefined {
    return this.#init.serverInfo;
  }

  /** The extensions the server announced (empty for a plain v0 server). */
  get capabilities(): Record<string, unknown> {
    return this.#init.capabilities ?? {};
  }

  /** **[ext]** Whether file contents travel as binary frames (connection, server and options allow). */
  get binaryFrames(): boolean {
    return this.#conn.binaryFrames === true && this.capabilities.binaryFrames === true &&
      this.#opts.binaryFrames !== false;
  }

  /** Whether the connection has ended (or `close()` was called). */
  get isClosed(): boolean {
    return this.#endInfo !== undefined;
  }

  /** The server's filesystem, throwing the same errors as a local one. */
  get fs(): FileSystem {
    return this.#fs;
  }

  /**
   * Close the connection: pending calls reject with
   * {@linkcode ConnectionClosedError}, the server kills this connection's
   * processes, and whatever carries the connection is released.
   */
  async close(): Promise<void> {
    this.#end("closed by the client", true);
    await this.#release();
  }

  /** Call a method by its protocol descriptor, with typed params and result. */
  call<P, R>(type: RequestType<P, R>, params: P): Promise<R> {
    return this.request<R>(type.method, params);
  }

  /** Call any method and get its raw result (for extensions). */
  async request<T = unknown>(method: string, params?: unknown): Promise<T> {
    if (this.#endInfo) throw new ConnectionClosedError(this.#endInfo.reason);
    try {
      return await this.#peer.request<T>(method, params);
    } catch (err) {
      if (err instanceof RemoteError) throw ServerError.fromRemote(err, method);
      if (err instanceof PeerClosedError) {
        // The peer closed under us: #end has run by now and says why.
        const info = this.#endInfo as ClosedInfo | undefined;
        throw new ConnectionClosedError(info?.reason ?? "connection ended");
      }
      throw err;
    }
  }

  // -- events ----------------------------------------------------------------

  /**
   * Call `listener` for every `process/output` of every process on this
   * connection. Returns a function that unsubscribes.
   */
  onOutput(listener: (event: OutputEvent) => void): () => void {
    return this.#hub.onOutput(listener);
  }

  /** Call `listener` for every `process/exited`. Returns a function that unsubscribes. */
  onExited(listener: (event: ExitedEvent) => void): () => void {
    return this.#hub.onExited(listener);
  }

  /**
   * Every notification from now on, in arrival order; ends when the
   * connection does. Unread notifications are buffered: stop iterating
   * (`break`) when no longer interested.
   */
  notifications(): AsyncIterableIterator<ServerNotification> {
    return this.#hub.notifications();
  }

  // -- process handles -------------------------------------------------------

  /**
   * Start a process and return its handle. The handle is registered before
   * `process/start` is sent, so no output can slip by.
   *
   * @throws {SpawnError} when the server cannot start it (`errno` says why)
   * @throws {TypeError} for invalid options
   */
  async spawn(options: SpawnOptions): Promise<SpawnedProcess> {
    const o = resolveSpawnOptions(options, {
      cwd: this.#opts.defaultCwd ?? DEFAULT_CWD,
      env: this.#opts.defaultEnv ?? DEFAULT_ENV,
    });
    const id = options.processId ?? this.#nextProcessId();
    if (this.#hub.has(id)) {
      throw new SpawnError(
        o.argv,
        `process id ${id} is already in use on this connection`,
        undefined,
      );
    }
    if (this.#endInfo) throw new ConnectionClosedError(this.#endInfo.reason);
    const state = { exited: false };
    const { handle, sink } = createProcessHandle(
      id,
      o.argv,
      o.tty,
      remoteProcessOps(this, id, state),
    );
    this.#hub.register(id, sink, state);
    const params = startParams(id, o);
    try {
      await this.processStart(params);
    } catch (err) {
      this.#hub.unregister(id, sink);
      if (err instanceof ServerError) {
        throw new SpawnError(o.argv, err.serverMessage, err.errno, { cause: err });
      }
      throw err;
    }
    return handle;
  }

  /** **[ext]** Session mode: every process of the session, running or retained. */
  async list(): Promise<ProcessListEntry[]> {
    return (await this.call(Requests.processList, {})).processes;
  }

  /**
   * **[ext]** Session mode: a handle on a process of the session, output
   * from `afterSeq` (default 0: all retained) once each, then live, and its exit.
   *
   * @throws {ServerError} when the session has no such process
   */
  attach(processId: string, options: { afterSeq?: number } = {}): Promise<SpawnedProcess> {
    const parts = { calls: this, hub: this.#hub, conn: this.#conn };
    return attachProcess(parts, processId, options.afterSeq ?? 0);
  }

  /** Start a process, feed it `stdin`, and collect its output and exit. */
  run(command: string[] | SpawnOptions, options?: RunOptions): Promise<RunResult> {
    return runProcess(this, command, options);
  }

  // -- connection machinery --------------------------------------------------

  async #handshake(): Promise<void> {
    const timeoutMs = this.#opts.initializeTimeoutMs ?? 20_000;
    const session = sessionRequest(this.#opts);
    const answer = this.call(Requests.initialize, {
      clientName: this.#opts.clientName ?? DEFAULT_CLIENT_NAME,
      ...(session ? { session } : {}),
    });
    answer.catch(() => {});
    const result: InitializeResult & { session?: SessionInfo } = await deadline(
      answer,
      timeoutMs,
      () => new InitializeTimeoutError(this.#target, timeoutMs),
    );
    if (typeof result?.protocolVersion !== "string") {
      throw new ConnectError(
        this.#target,
        `not an exec-server: initialize answered ${JSON.stringify(result).slice(0, 200)}`,
      );
    }
    if (session && typeof result.session?.id !== "string") {
      throw new ConnectError(this.#target, "the server keeps no sessions (no initialize.session)");
    }
    this.#sessionId = result.session?.id;
    this.#init = result;
    this.#peer.notify(Notifications.initialized.method, {});
  }

  async #read(): Promise<void> {
    let failure: string | undefined;
    try {
      for await (const frame of this.#conn.frames()) {
        if (frame.kind === "text") this.#peer.receive(frame.text, frame.payload);
        else if (frame.kind === "tooLarge") {
          this.#problem(`dropped a ${frame.bytes}-byte message (limit ${frame.limit} bytes)`);
        } else this.#problem(`dropped a ${frame.bytes}-byte message that is not UTF-8`);
      }
    } catch (err) {
      failure = `transport failed: ${describe(err)}`;
    }
    if (this.#endInfo === undefined) {
      const explained = await this.#lifetime.explainEnd?.().catch(() => undefined);
      this.#end(explained ?? failure ?? `${this.#target} closed the connection`, false);
      void this.#release();
    }
  }

  /** Mark the connection over: every pending and later call fails with `reason`. */
  #end(reason: string, byClient: boolean): void {
    if (this.#endInfo) return;
    this.#endInfo = { reason, byClient };
    this.#peer.close(reason, (r) => new ConnectionClosedError(r));
    this.#hub.end(new ConnectionClosedError(reason));
  }

  /** Close the transport, wait for the other side, release the carrier. Idempotent. */
  #release(): Promise<void> {
    this.#released ??= (async () => {
      const ms = this.#opts.closeTimeoutMs ?? 5000;
      await within(this.#conn.close().catch(() => {}), ms);
      // A server keeping a session stays up on purpose: no hang-up to wait for.
      if (this.#sessionId === undefined) await within(this.#readLoop, ms);
      try {
        await this.#lifetime.dispose?.();
      } catch (err) {
        this.#problem(`releasing the connection failed: ${describe(err)}`);
      }
      this.#resolveClosed(this.#endInfo!);
    })();
    return this.#released;
  }

  #problem(message: string): void {
    this.#opts.onProblem?.(message);
  }
}
