/**
 * The exec-server client: connect over stdio, a websocket, ssh or in
 * process; call every protocol method with typed parameters and bytes as
 * `Uint8Array`; start processes as handles whose output is never missed.
 *
 * @module
 */
import { decodeBase64, encodeBase64 } from "../protocol/base64.ts";
import { ErrorCode } from "../protocol/errors.ts";
import type {
  InitializeResult,
  ProcessStartParams,
  StreamName,
  TerminalSize,
} from "../protocol/methods.ts";
import { Method } from "../protocol/methods.ts";
import type { FrameConnection } from "../rpc/connection.ts";
import { PeerClosedError, RemoteError, RpcPeer } from "../rpc/peer.ts";
import { createClientWebSocket, waitForOpen } from "../runtime/websocket_client.ts";
import type { ServerOptions } from "../server/options.ts";
import { startInProcessServer } from "../transport/in_process.ts";
import { StdioConnection } from "../transport/stdio.ts";
import { WebSocketConnection } from "../transport/websocket.ts";
import type {
  CopyOptions,
  CreateDirectoryOptions,
  DirectoryEntry,
  FileMetadata,
  FileSystem,
  RemoveOptions,
} from "../fs/types.ts";
import { AsyncQueue } from "./async_queue.ts";
import {
  type ChildServerOptions,
  type ConnectionLifetime,
  startChildServer,
  within,
} from "./child_server.ts";
import {
  ConnectError,
  ConnectionClosedError,
  ConnectTimeoutError,
  InitializeTimeoutError,
  ProcessError,
  ServerError,
  SpawnError,
} from "./errors.ts";
import {
  createProcessHandle,
  DEFAULT_CWD,
  DEFAULT_ENV,
  type ExecProcess,
  processIdGenerator,
  type ProcessSink,
  resolveSpawnOptions,
  type RunOptions,
  runProcess,
  type RunResult,
  type SpawnedProcess,
  type SpawnOptions,
} from "./process_handle.ts";
import { RemoteFileSystem } from "./remote_fs.ts";
import { sshCommandLine, type SshCommandOptions } from "./ssh.ts";
import { type SshBootstrapOptions, startBootstrappedSsh } from "./ssh_bootstrap.ts";

/** Options every way of connecting accepts. */
export interface ClientOptions {
  /** The name sent in `initialize` (default `"exec-server-client"`). */
  clientName?: string;
  /** How long the server may take to answer `initialize`, in ms (default 20000). */
  initializeTimeoutMs?: number;
  /** How long `close()` waits for the server to hang up before forcing it, in ms (default 5000). */
  closeTimeoutMs?: number;
  /** The working directory of processes started without one (default `/`). */
  defaultCwd?: string;
  /**
   * The environment of processes started without one (default
   * `{PATH: "/usr/local/bin:/usr/bin:/bin"}`; nothing is inherited).
   */
  defaultEnv?: Record<string, string>;
  /** Told about anything odd the client handled by itself (malformed notifications, ...). */
  onProblem?: (message: string) => void;
}

/** Options of {@linkcode ExecServerClient.connectWebSocket}. */
export interface WebSocketClientOptions extends ClientOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** More headers for the opening handshake. */
  headers?: Record<string, string>;
  /** How long the websocket may take to open, in ms (default 10000). */
  connectTimeoutMs?: number;
  /** The largest accepted incoming message, in bytes (default 256 MiB). */
  maxMessageBytes?: number;
}

/** Options of {@linkcode ExecServerClient.connectStdio}. */
export interface StdioClientOptions extends ClientOptions {
  /** The largest accepted incoming line, in bytes (default 256 MiB). */
  maxMessageBytes?: number;
}

/** Options of {@linkcode ExecServerClient.spawnStdio}. */
export interface SpawnStdioOptions extends ClientOptions, ChildServerOptions {}

/** Options of {@linkcode ExecServerClient.connectSsh}. */
export interface SshClientOptions extends SpawnStdioOptions, SshCommandOptions {
  /**
   * Run this local binary remotely, uploading it through the ssh connection
   * when the remote's cache lacks it (instead of running `binary`).
   */
  bootstrap?: SshBootstrapOptions;
}

/** Why a connection ended. */
export interface ClosedInfo {
  /** A sentence naming the cause, e.g. "closed by the client". */
  reason: string;
  /** True when `close()` ended it (or a failed connect did). */
  byClient: boolean;
}

/** A `process/output` notification with its bytes decoded. */
export interface OutputEvent {
  /** The process the output belongs to. */
  processId: string;
  /** Which stream the bytes came from. */
  stream: StreamName;
  /** The bytes. */
  data: Uint8Array;
  /** The chunk's sequence number, when the server sends one. */
  seq: number | undefined;
}

/** A `process/exited` notification. */
export interface ExitedEvent {
  /** The process that exited. */
  processId: string;
  /** Exit status; 128+N when killed by signal N. */
  exitCode: number;
  /** The signal that ended it, or null. */
  signal: string | null;
  /** Run time in ms, when the server reports it. */
  durationMs: number | undefined;
  /** Wall-clock start, ms since the epoch, when reported. */
  startedAtMs: number | undefined;
  /** Wall-clock exit, ms since the epoch, when reported. */
  exitedAtMs: number | undefined;
}

/** One server notification, as yielded by {@linkcode ExecServerClient.notifications}. */
export type ServerNotification =
  | { kind: "output"; event: OutputEvent }
  | { kind: "exited"; event: ExitedEvent }
  | { kind: "other"; method: string; params: unknown };

/** One chunk of a `process/read` result, decoded. */
export interface DecodedReadChunk {
  /** Sequence number. */
  seq: number;
  /** Stream name. */
  stream: StreamName;
  /** The bytes. */
  data: Uint8Array;
}

/** Options of {@linkcode ExecServerClient.processRead}. */
export interface ProcessReadOptions {
  /** Return chunks with `seq` greater than this (default 0). */
  afterSeq?: number;
  /** Stop before the total exceeds this (the first chunk always comes). */
  maxBytes?: number;
  /** Wait up to this long for output or exit when there is nothing. */
  waitMs?: number;
}

/** A decoded `process/read` result. */
export interface DecodedReadResult {
  /** Chunks after `afterSeq`, oldest first. */
  chunks: DecodedReadChunk[];
  /** Last returned seq + 1, or the next seq to be assigned. */
  nextSeq: number;
  /** Whether the process has exited (and this read reached its last chunk). */
  exited: boolean;
  /** Exit code once exited, else null. */
  exitCode: number | null;
  /** The signal that ended it, once exited. */
  signal: string | null | undefined;
  /** Run time in ms, once exited. */
  durationMs: number | undefined;
  /** Chunks after `afterSeq` that were evicted before this read. */
  evicted: { fromSeq: number; toSeq: number } | undefined;
}

/** Params of {@linkcode ExecServerClient.processStart}: `process/start` as on the wire. */
export type ProcessStartOptions = ProcessStartParams;

const encoder = new TextEncoder();

/**
 * What the client accepts by default: more than the server's own 128 MiB
 * limit, since a 128 MiB file comes back as ~171 MB of base64.
 */
const CLIENT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/** The largest stdin chunk sent in one `process/write`. */
const WRITE_CHUNK_BYTES = 4 * 1024 * 1024;

function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? encoder.encode(data) : data;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

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
export class ExecServerClient implements ExecProcess {
  #conn: FrameConnection;
  #lifetime: ConnectionLifetime;
  #opts: ClientOptions;
  #peer: RpcPeer;
  #target: string;
  #init: InitializeResult = { protocolVersion: "" };
  #procs = new Map<string, { sink: ProcessSink; seq: number; state: { exited: boolean } }>();
  #outputListeners = new Set<(event: OutputEvent) => void>();
  #exitedListeners = new Set<(event: ExitedEvent) => void>();
  #queues = new Set<AsyncQueue<ServerNotification>>();
  #nextProcessId = processIdGenerator();
  #endInfo: ClosedInfo | undefined;
  #readLoop: Promise<void>;
  #released: Promise<void> | undefined;
  #resolveClosed!: (info: ClosedInfo) => void;
  #fs: RemoteFileSystem;

  /** Resolves once the connection has ended and its resources were released. */
  readonly closed: Promise<ClosedInfo>;

  private constructor(conn: FrameConnection, opts: ClientOptions, lifetime: ConnectionLifetime) {
    this.#conn = conn;
    this.#opts = opts;
    this.#lifetime = lifetime;
    this.#target = lifetime.target ?? "the server";
    this.closed = new Promise((resolve) => this.#resolveClosed = resolve);
    this.#fs = new RemoteFileSystem(this);
    this.#peer = new RpcPeer({
      send: (text) => {
        conn.send(text);
      },
      onNotification: (method, params) => this.#onNotification(method, params),
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

  /**
   * Speak newline-delimited JSON over a pair of byte streams (e.g. the
   * pipes of a server you started yourself).
   */
  static connectStdio(
    readable: ReadableStream<Uint8Array>,
    writable: WritableStream<Uint8Array>,
    opts: StdioClientOptions = {},
  ): Promise<ExecServerClient> {
    const conn = new StdioConnection(readable, writable, {
      maxMessageBytes: opts.maxMessageBytes ?? CLIENT_MAX_MESSAGE_BYTES,
    });
    return ExecServerClient.connect(conn, opts, { target: "the stdio server" });
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
    if (!/^wss?:\/\//i.test(url)) {
      throw new TypeError(
        `websocket URL must start with ws:// or wss://, got ${JSON.stringify(url)}`,
      );
    }
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== undefined) headers.Authorization = `Bearer ${opts.token}`;
    const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
    let socket;
    try {
      socket = await createClientWebSocket(url, {
        headers,
        maxPayloadBytes: opts.maxMessageBytes ?? CLIENT_MAX_MESSAGE_BYTES,
      });
    } catch (err) {
      throw new ConnectError(url, describe(err), { cause: err });
    }
    const conn = new WebSocketConnection(socket, {
      maxMessageBytes: opts.maxMessageBytes ?? CLIENT_MAX_MESSAGE_BYTES,
      closeTimeoutMs: opts.closeTimeoutMs,
    });
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new ConnectTimeoutError(url, connectTimeoutMs)),
      connectTimeoutMs,
    );
    try {
      await waitForOpen(socket, abort.signal);
    } catch (err) {
      if (err instanceof ConnectTimeoutError) throw err;
      throw new ConnectError(url, describe(err), { cause: err });
    } finally {
      clearTimeout(timer);
    }
    return ExecServerClient.connect(conn, opts, {
      target: url,
      dispose: () => {
        if (socket.readyState !== 3) socket.terminate();
        return Promise.resolve();
      },
    });
  }

  /**
   * Run a server in this process, connected through memory: the same
   * protocol and semantics as a remote server, with no transport.
   */
  static connectInProcess(
    serverOptions: Partial<ServerOptions> = {},
    opts: ClientOptions = {},
  ): Promise<ExecServerClient> {
    const { connection, served } = startInProcessServer(serverOptions);
    return ExecServerClient.connect(connection, opts, {
      target: "the in-process server",
      dispose: () => served.catch(() => {}),
    });
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
    return ExecServerClient.connect(child.connection, opts, child.lifetime);
  }

  /**
   * Run the server on another host with `ssh -T [sshArgs] -- destination
   * binary` and speak to it over ssh's stdio. Authentication is ssh's
   * business: keys, agent, `~/.ssh/config`.
   *
   * With `bootstrap`, the remote needs no installed server: the local
   * binary is uploaded once into a per-version cache and run from there.
   *
   * @example
   * ```ts
   * import { ExecServerClient } from "../../mod.ts";
   * const client = await ExecServerClient.connectSsh("me@build-box", {
   *   binary: "~/.local/bin/exec-server",
   *   sshArgs: ["-o", "BatchMode=yes"],
   * });
   * const fresh = await ExecServerClient.connectSsh("me@bare-box", {
   *   bootstrap: { localBinary: "dist/exec-server" },
   * });
   * ```
   * @throws {BootstrapError} when bootstrapping fails (wrong platform, no space, ...)
   */
  static async connectSsh(
    destination: string,
    opts: SshClientOptions = {},
  ): Promise<ExecServerClient> {
    if (opts.bootstrap === undefined) {
      // Inside an async method, so a bad destination or binary rejects like any other failure.
      const [command, args] = sshCommandLine(destination, opts);
      return await ExecServerClient.spawnStdio(command, args, opts);
    }
    return await ExecServerClient.#connectBootstrapped(destination, opts, opts.bootstrap);
  }

  static async #connectBootstrapped(
    destination: string,
    opts: SshClientOptions,
    bootstrap: SshBootstrapOptions,
  ): Promise<ExecServerClient> {
    const server = await startBootstrappedSsh(destination, { ...opts, bootstrap });
    try {
      return await ExecServerClient.connect(server.connection, opts, server.lifetime);
    } catch (err) {
      throw server.startFailure(err);
    }
  }

  /** The protocol version the server answered (`"exec-server.v0"`). */
  get protocolVersion(): string {
    return this.#init.protocolVersion;
  }

  /** The server's name and version, when it says. */
  get serverInfo(): { name: string; version: string } | undefined {
    return this.#init.serverInfo;
  }

  /** The extensions the server announced (empty for a plain v0 server). */
  get capabilities(): Record<string, unknown> {
    return this.#init.capabilities ?? {};
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

  // -- process/* ----------------------------------------------------------

  /** `process/start` as on the wire. Prefer {@linkcode spawn}, which never misses output. */
  async processStart(params: ProcessStartOptions): Promise<{ processId: string }> {
    return await this.request(Method.ProcessStart, params);
  }

  /** `process/read`: retained output after `afterSeq`. */
  async processRead(
    processId: string,
    options: ProcessReadOptions = {},
  ): Promise<DecodedReadResult> {
    const r = await this.request<{
      chunks: { seq: number; stream: StreamName; chunk: string }[];
      nextSeq: number;
      exited: boolean;
      exitCode: number | null;
      signal?: string | null;
      durationMs?: number;
      evicted?: { fromSeq: number; toSeq: number };
    }>(Method.ProcessRead, { processId, ...options });
    return {
      chunks: r.chunks.map((c) => ({ seq: c.seq, stream: c.stream, data: decodeBase64(c.chunk) })),
      nextSeq: r.nextSeq,
      exited: r.exited,
      exitCode: r.exitCode,
      signal: r.signal,
      durationMs: r.durationMs,
      evicted: r.evicted,
    };
  }

  /**
   * `process/write`: bytes (or UTF-8 text) to a process's stdin. Large data
   * goes as several requests of at most 4 MiB, in order: one huge message
   * could exceed the server's message limit, whose refusal cannot name the
   * request it belonged to.
   */
  async processWrite(processId: string, data: Uint8Array | string): Promise<void> {
    const bytes = toBytes(data);
    if (bytes.length === 0) {
      await this.request(Method.ProcessWrite, { processId, chunk: "" });
      return;
    }
    // Smaller pieces when the server announced a smaller message limit.
    const limit = this.#announcedMessageLimit();
    const step = limit === undefined
      ? WRITE_CHUNK_BYTES
      : Math.max(1, Math.min(WRITE_CHUNK_BYTES, Math.floor((limit - 1024) / 4) * 3));
    for (let at = 0; at < bytes.length; at += step) {
      const chunk = encodeBase64(bytes.subarray(at, at + step));
      await this.request(Method.ProcessWrite, { processId, chunk });
    }
  }

  /** The server's `capabilities.limits.maxMessageBytes`, when it announced one. */
  #announcedMessageLimit(): number | undefined {
    const limits = this.capabilities.limits as { maxMessageBytes?: unknown } | undefined;
    const limit = limits?.maxMessageBytes;
    return typeof limit === "number" && limit > 1024 ? limit : undefined;
  }

  /** `process/terminate`: resolves to whether the process was running. */
  async processTerminate(processId: string, options: { graceMs?: number } = {}): Promise<boolean> {
    const params = options.graceMs === undefined
      ? { processId }
      : { processId, graceMs: options.graceMs };
    const r = await this.request<{ running: boolean }>(Method.ProcessTerminate, params);
    return r.running;
  }

  /** `process/closeStdin`. */
  async processCloseStdin(processId: string): Promise<void> {
    await this.request(Method.ProcessCloseStdin, { processId });
  }

  /** `process/resize`. */
  async processResize(processId: string, size: TerminalSize): Promise<void> {
    await this.request(Method.ProcessResize, { processId, rows: size.rows, cols: size.cols });
  }

  /** `process/signal`: resolves to the signal's canonical name. */
  async processSignal(processId: string, signal: string): Promise<string> {
    const r = await this.request<{ signal?: string }>(Method.ProcessSignal, { processId, signal });
    return r.signal ?? signal;
  }

  // -- fs/* (errors are ServerError; `client.fs` gives FileSystemError) ----

  /** `fs/readFile`. */
  async fsReadFile(path: string): Promise<Uint8Array> {
    const r = await this.request<{ dataBase64: string }>(Method.FsReadFile, { path });
    return decodeBase64(r.dataBase64);
  }

  /**
   * `fs/writeFile`: create or truncate.
   *
   * @throws {ServerError} with code -32600 and errno `EFBIG`, before
   *   anything is sent, when the message would exceed the server's announced
   *   `maxMessageBytes` (the server could not say which request it refused)
   */
  async fsWriteFile(path: string, data: Uint8Array | string): Promise<void> {
    const bytes = toBytes(data);
    const limit = this.#announcedMessageLimit();
    // base64 plus the JSON around it, with room for a long path.
    const estimate = Math.ceil(bytes.length / 3) * 4 + path.length * 6 + 256;
    if (limit !== undefined && estimate > limit) {
      throw new ServerError(Method.FsWriteFile, {
        code: ErrorCode.InvalidRequest,
        message: `${path}: ${bytes.length} bytes make a ${estimate}-byte message, over the ` +
          `server's limit of ${limit} bytes (--max-message-bytes); write it in parts or through a process`,
        data: { errno: "EFBIG" },
      });
    }
    await this.request(Method.FsWriteFile, { path, dataBase64: encodeBase64(bytes) });
  }

  /** `fs/createDirectory` (`recursive` defaults to true on the server). */
  async fsCreateDirectory(path: string, options: CreateDirectoryOptions = {}): Promise<void> {
    await this.request(Method.FsCreateDirectory, { path, ...options });
  }

  /** `fs/getMetadata`. */
  async fsGetMetadata(path: string): Promise<FileMetadata> {
    const r = await this.request<FileMetadata>(Method.FsGetMetadata, { path });
    return {
      isDirectory: r.isDirectory,
      isFile: r.isFile,
      createdAtMs: r.createdAtMs,
      modifiedAtMs: r.modifiedAtMs,
    };
  }

  /** `fs/readDirectory`. */
  async fsReadDirectory(path: string): Promise<DirectoryEntry[]> {
    const r = await this.request<{ entries: DirectoryEntry[] }>(Method.FsReadDirectory, { path });
    return r.entries.map((e) => ({
      fileName: e.fileName,
      isDirectory: e.isDirectory,
      isFile: e.isFile,
    }));
  }

  /** `fs/remove` (`recursive` and `force` default to true on the server). */
  async fsRemove(path: string, options: RemoveOptions = {}): Promise<void> {
    await this.request(Method.FsRemove, { path, ...options });
  }

  /** `fs/copy` (`recursive` defaults to false). */
  async fsCopy(
    sourcePath: string,
    destinationPath: string,
    options: CopyOptions = {},
  ): Promise<void> {
    await this.request(Method.FsCopy, { sourcePath, destinationPath, ...options });
  }

  // -- events ----------------------------------------------------------------

  /**
   * Call `listener` for every `process/output` of every process on this
   * connection. Returns a function that unsubscribes.
   */
  onOutput(listener: (event: OutputEvent) => void): () => void {
    this.#outputListeners.add(listener);
    return () => this.#outputListeners.delete(listener);
  }

  /** Call `listener` for every `process/exited`. Returns a function that unsubscribes. */
  onExited(listener: (event: ExitedEvent) => void): () => void {
    this.#exitedListeners.add(listener);
    return () => this.#exitedListeners.delete(listener);
  }

  /**
   * Every notification from now on, in arrival order; ends when the
   * connection does. Unread notifications are buffered: stop iterating
   * (`break`) when no longer interested.
   */
  notifications(): AsyncIterableIterator<ServerNotification> {
    const queue = new AsyncQueue<ServerNotification>(() => this.#queues.delete(queue));
    if (this.#endInfo) queue.end();
    else this.#queues.add(queue);
    const iterator = queue[Symbol.asyncIterator]();
    return {
      next: () => iterator.next(),
      return: () => iterator.return!(),
      [Symbol.asyncIterator]() {
        return this;
      },
    } as AsyncIterableIterator<ServerNotification>;
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
    if (this.#procs.has(id)) {
      throw new SpawnError(
        o.argv,
        `process id ${id} is already in use on this connection`,
        undefined,
      );
    }
    if (this.#endInfo) throw new ConnectionClosedError(this.#endInfo.reason);
    const state = { exited: false };
    const { handle, sink } = createProcessHandle(id, o.argv, o.tty, this.#processOps(id, state));
    this.#procs.set(id, { sink, seq: 0, state });
    const params: ProcessStartOptions = {
      processId: id,
      argv: o.argv,
      cwd: o.cwd,
      env: o.env,
      tty: o.tty,
    };
    if (o.arg0 !== null) params.arg0 = o.arg0;
    if (o.pipeStdin) params.pipeStdin = true;
    if (o.size) params.size = o.size;
    try {
      await this.processStart(params);
    } catch (err) {
      if (this.#procs.get(id)?.sink === sink) this.#procs.delete(id);
      if (err instanceof ServerError) {
        throw new SpawnError(o.argv, err.serverMessage, err.errno, { cause: err });
      }
      throw err;
    }
    return handle;
  }

  /** Start a process, feed it `stdin`, and collect its output and exit. */
  run(command: string[] | SpawnOptions, options?: RunOptions): Promise<RunResult> {
    return runProcess(this, command, options);
  }

  /**
   * The operations of one handle. Once its process has exited they never
   * reach the server: after retention the id may name a new process there.
   */
  #processOps(id: string, state: { readonly exited: boolean }) {
    const wrap = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
      if (state.exited) throw new ProcessError(id, operation, "the process has exited");
      try {
        return await call();
      } catch (err) {
        if (err instanceof ServerError) {
          throw new ProcessError(id, operation, err.serverMessage, { cause: err });
        }
        throw err;
      }
    };
    return {
      write: (data: Uint8Array) => wrap("write", () => this.processWrite(id, data)),
      closeStdin: () => wrap("closeStdin", () => this.processCloseStdin(id)),
      resize: (size: TerminalSize) => wrap("resize", () => this.processResize(id, size)),
      signal: async (signal: string) => {
        await wrap("signal", () => this.processSignal(id, signal));
      },
      terminate: (graceMs: number | undefined) =>
        state.exited
          ? Promise.resolve(false)
          : wrap("terminate", () => this.processTerminate(id, { graceMs })),
    };
  }

  // -- connection machinery --------------------------------------------------

  async #handshake(): Promise<void> {
    const timeoutMs = this.#opts.initializeTimeoutMs ?? 20_000;
    const answer = this.request<InitializeResult>(Method.Initialize, {
      clientName: this.#opts.clientName ?? "exec-server-client",
    });
    answer.catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new InitializeTimeoutError(this.#target, timeoutMs)),
        timeoutMs,
      );
    });
    let result: InitializeResult;
    try {
      result = await Promise.race([answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
    if (typeof result?.protocolVersion !== "string") {
      throw new ConnectError(
        this.#target,
        `not an exec-server: initialize answered ${JSON.stringify(result).slice(0, 200)}`,
      );
    }
    this.#init = result;
    this.#peer.notify(Method.Initialized, {});
  }

  async #read(): Promise<void> {
    let failure: string | undefined;
    try {
      for await (const frame of this.#conn.frames()) {
        if (frame.kind === "text") this.#peer.receive(frame.text);
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
    const procs = [...this.#procs.values()];
    this.#procs.clear();
    for (const p of procs) p.sink.failed(new ConnectionClosedError(reason));
    for (const q of this.#queues) q.end();
    this.#queues.clear();
  }

  /** Close the transport, wait for the other side, release the carrier. Idempotent. */
  #release(): Promise<void> {
    this.#released ??= (async () => {
      const ms = this.#opts.closeTimeoutMs ?? 5000;
      await within(this.#conn.close().catch(() => {}), ms);
      await within(this.#readLoop, ms);
      try {
        await this.#lifetime.dispose?.();
      } catch (err) {
        this.#problem(`releasing the connection failed: ${describe(err)}`);
      }
      this.#resolveClosed(this.#endInfo!);
    })();
    return this.#released;
  }

  #onNotification(method: string, params: unknown): void {
    if (this.#endInfo) return;
    if (method === Method.ProcessOutput) {
      const event = parseOutput(params);
      if (!event) {
        this.#problem(`ignored a malformed ${method}: ${JSON.stringify(params).slice(0, 200)}`);
        return;
      }
      const proc = this.#procs.get(event.processId);
      if (proc) {
        proc.seq = event.seq ?? proc.seq + 1;
        proc.sink.output({ stream: event.stream, data: event.data, seq: proc.seq });
      }
      this.#emit(this.#outputListeners, event, { kind: "output", event });
    } else if (method === Method.ProcessExited) {
      const event = parseExited(params);
      if (!event) {
        this.#problem(`ignored a malformed ${method}: ${JSON.stringify(params).slice(0, 200)}`);
        return;
      }
      const proc = this.#procs.get(event.processId);
      if (proc) {
        proc.state.exited = true;
        this.#procs.delete(event.processId);
        proc.sink.exited({
          exitCode: event.exitCode,
          signal: event.signal,
          durationMs: event.durationMs ?? 0,
        });
      }
      this.#emit(this.#exitedListeners, event, { kind: "exited", event });
    } else {
      for (const q of this.#queues) q.push({ kind: "other", method, params });
    }
  }

  #emit<E>(listeners: Set<(event: E) => void>, event: E, note: ServerNotification): void {
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.#problem(`an event listener threw: ${describe(err)}`);
      }
    }
    for (const q of this.#queues) q.push(note);
  }

  #problem(message: string): void {
    this.#opts.onProblem?.(message);
  }
}

function parseOutput(params: unknown): OutputEvent | undefined {
  const p = params as Record<string, unknown> | null;
  if (typeof p?.processId !== "string" || typeof p.chunk !== "string") return undefined;
  if (p.stream !== "stdout" && p.stream !== "stderr" && p.stream !== "pty") return undefined;
  let data: Uint8Array;
  try {
    data = decodeBase64(p.chunk);
  } catch {
    return undefined;
  }
  return {
    processId: p.processId,
    stream: p.stream,
    data,
    seq: typeof p.seq === "number" ? p.seq : undefined,
  };
}

function parseExited(params: unknown): ExitedEvent | undefined {
  const p = params as Record<string, unknown> | null;
  if (typeof p?.processId !== "string" || typeof p.exitCode !== "number") return undefined;
  const num = (v: unknown) => typeof v === "number" ? v : undefined;
  return {
    processId: p.processId,
    exitCode: p.exitCode,
    signal: typeof p.signal === "string" ? p.signal : null,
    durationMs: num(p.durationMs),
    startedAtMs: num(p.startedAtMs),
    exitedAtMs: num(p.exitedAtMs),
  };
}
