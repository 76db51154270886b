/**
 * The client's options and events: what each way of connecting accepts and
 * what the client hands back (decoded output, exits, read results).
 *
 * @module
 */
import type { ProcessStartParams, StreamName } from "../protocol/methods.ts";
import type { ChildServerOptions } from "./connect/child_server.ts";
import type { SshCommandOptions } from "./ssh.ts";
import type { SshBootstrapOptions } from "./ssh_bootstrap.ts";

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
  /**
   * **[ext]** Send and receive file contents as binary frames where the
   * connection (stdio, websocket) and the server (`capabilities.binaryFrames`)
   * allow (default true); false keeps them base64 in JSON, as in v0.
   */
  binaryFrames?: boolean;
}

/**
 * **[ext]** Session mode: the client opens (or joins) a resumable session
 * on the server, whose processes may outlive the connection.
 */
export interface SessionOptions {
  /**
   * Session mode, and when the connection drops, reconnect (a new
   * websocket, a new ssh), resume the session and carry on: spawned handles
   * keep their output and `wait()` its exit. Requests in flight at the drop
   * fail. The server keeps a dropped session's processes for
   * `--session-grace-ms` (default 60 s), or each for its own `ttlMs`.
   */
  resume?: boolean;
  /** Session mode: how long to keep trying to resume, in ms (default 25 000). */
  reconnectWithinMs?: number;
  /**
   * Join the existing session with this id (as another client's
   * `client.sessionId` tells it) instead of opening one: its processes are
   * then found with `list()` and read with `attach()`. Implies session mode.
   */
  sessionId?: string;
}

/** Options of `ExecServerClient.connectWebSocket`. */
export interface WebSocketClientOptions extends ClientOptions, SessionOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** More headers for the opening handshake. */
  headers?: Record<string, string>;
  /** How long the websocket may take to open, in ms (default 10000). */
  connectTimeoutMs?: number;
  /** The largest accepted incoming message, in bytes (default 256 MiB). */
  maxMessageBytes?: number;
}

/** Options of `ExecServerClient.connectStdio`. */
export interface StdioClientOptions extends ClientOptions, Omit<SessionOptions, "resume"> {
  /** The largest accepted incoming line, in bytes (default 256 MiB). */
  maxMessageBytes?: number;
}

/** Options of `ExecServerClient.spawnStdio`. */
export interface SpawnStdioOptions
  extends ClientOptions, ChildServerOptions, Omit<SessionOptions, "resume"> {}

/** Options of `ExecServerClient.connectSsh`. */
export interface SshClientOptions extends SpawnStdioOptions, SshCommandOptions, SessionOptions {
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
  /** Sandboxed processes only: whether the sandbox caused the failure. */
  sandboxDenied?: boolean;
}

/** One server notification, as yielded by `ExecServerClient.notifications`. */
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

/** Options of `ExecServerClient.processRead`. */
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

/** Params of `ExecServerClient.processStart`: `process/start` as on the wire. */
export type ProcessStartOptions = ProcessStartParams;
