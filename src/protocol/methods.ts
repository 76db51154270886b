/**
 * Method names, parameter and result types of exec-server.v0 and of this
 * server's extensions (marked [ext]).
 *
 * @module
 */
import type { Base64Part } from "./base64.ts";

/** The protocol version string answered by `initialize`. */
export const PROTOCOL_VERSION = "exec-server.v0";

/** Every method and notification name of the protocol. */
export const Method = {
  Initialize: "initialize",
  Initialized: "initialized",
  ProcessStart: "process/start",
  ProcessRead: "process/read",
  ProcessList: "process/list",
  ProcessWrite: "process/write",
  ProcessTerminate: "process/terminate",
  ProcessOutput: "process/output",
  ProcessExited: "process/exited",
  ProcessCloseStdin: "process/closeStdin",
  ProcessResize: "process/resize",
  ProcessSignal: "process/signal",
  FsReadFile: "fs/readFile",
  FsWriteFile: "fs/writeFile",
  FsCreateDirectory: "fs/createDirectory",
  FsGetMetadata: "fs/getMetadata",
  FsReadDirectory: "fs/readDirectory",
  FsRemove: "fs/remove",
  FsCopy: "fs/copy",
  FsRename: "fs/rename",
} as const;

/** Params of `initialize`. */
export interface InitializeParams {
  /** A name for the client, used in logs. */
  clientName: string;
}

/** Result of `initialize`. */
export interface InitializeResult {
  /** Always `"exec-server.v0"`. */
  protocolVersion: string;
  /** [ext] The server's name and version. */
  serverInfo?: { name: string; version: string };
  /** [ext] One member per supported extension. */
  capabilities?: Record<string, unknown>;
}

/**
 * The `sandbox` member of `process/start` (and **[ext]** of `fs/*` calls):
 * `{mode: "none"}` runs directly; **[ext]** `{mode: "restricted", ...}`
 * runs under a permission set (docs/protocol.md, "Sandboxes").
 */
export type SandboxParams =
  | {
    /** Run the process directly. */
    mode: "none";
  }
  | RestrictedSandboxParams;

/** **[ext]** A permission set of plain absolute paths. */
export interface RestrictedSandboxParams {
  /** Selects this form. */
  mode: "restricted";
  /** Readable (and runnable) paths; default `["/"]`, the whole machine. */
  read?: string[];
  /** Writable paths (readable too); default none. */
  write?: string[];
  /** Paths neither readable nor writable, even inside a readable or writable one. */
  deny?: string[];
  /** Reach the network (default false: a private loopback only). */
  network?: boolean;
}

/** Initial terminal size. */
export interface TerminalSize {
  /** Rows (lines), at least 1. */
  rows: number;
  /** Columns, at least 1. */
  cols: number;
}

/** Params of `process/start`. */
export interface ProcessStartParams {
  /** Client-chosen id, unique within the connection. */
  processId: string;
  /** Program and arguments; `argv[0]` is looked up in the child's `PATH`. */
  argv: string[];
  /** Absolute working directory. */
  cwd: string;
  /** The child's entire environment. */
  env: Record<string, string>;
  /** Run under a pseudo-terminal. */
  tty: boolean;
  /** Overrides the `argv[0]` the child sees. */
  arg0?: string | null;
  /** Absent, null or `{mode: "none"}`; **[ext]** a restricted sandbox. */
  sandbox?: SandboxParams | null;
  /** [ext] Keep stdin open for a pipe process. */
  pipeStdin?: boolean;
  /** [ext] Initial PTY size (default 24x80). */
  size?: TerminalSize;
  /**
   * [ext] In a resumable session: how long the process may keep running
   * while nobody is attached, in ms (default: the session's grace window).
   */
  ttlMs?: number;
}

/** Result of `process/start`. */
export interface ProcessStartResult {
  /** The id the process was started under. */
  processId: string;
  /** [ext] `"bubblewrap"` when the process runs in a sandbox; absent otherwise. */
  sandbox?: "bubblewrap";
}

/** The name of an output stream. */
export type StreamName = "stdout" | "stderr" | "pty";

/** Params of the `process/output` notification. */
export interface ProcessOutputParams {
  /** The process the output belongs to. */
  processId: string;
  /** Which stream the bytes came from. */
  stream: StreamName;
  /** The bytes, base64. */
  chunk: string;
  /** [ext] The chunk's sequence number, as in `process/read`. */
  seq?: number;
}

/** Params of the `process/exited` notification. */
export interface ProcessExitedParams {
  /** The process that exited. */
  processId: string;
  /** Exit status; 128+N when killed by signal N. */
  exitCode: number;
  /** [ext] The signal that ended it, e.g. `"SIGKILL"`, or null. */
  signal?: string | null;
  /** [ext] Wall-clock start, ms since the epoch. */
  startedAtMs?: number;
  /** [ext] Wall-clock exit, ms since the epoch. */
  exitedAtMs?: number;
  /** [ext] Run time in ms. */
  durationMs?: number;
  /** [ext] Sandboxed processes only: whether the sandbox caused the failure. */
  sandboxDenied?: boolean;
}

/** Params of `process/read`. */
export interface ProcessReadParams {
  /** The process to read. */
  processId: string;
  /** Return chunks with `seq` greater than this (default 0). */
  afterSeq?: number;
  /** Stop before the total exceeds this (the first chunk always comes). */
  maxBytes?: number;
  /** Wait up to this long for output or exit when there is nothing. */
  waitMs?: number;
}

/** One retained chunk in a `process/read` result. */
export interface ReadChunk {
  /** Sequence number, shared by all streams of the process. */
  seq: number;
  /** Stream name. */
  stream: StreamName;
  /** The bytes, base64. */
  chunk: string;
}

/** Result of `process/read`. */
export interface ProcessReadResult {
  /** Chunks after `afterSeq`, oldest first. */
  chunks: ReadChunk[];
  /** Last returned seq + 1, or the next seq to be assigned. */
  nextSeq: number;
  /** Whether the process has exited (and all output was read from it). */
  exited: boolean;
  /** Exit code once exited, else null. */
  exitCode: number | null;
  /** [ext] The signal that ended it, once exited. */
  signal?: string | null;
  /** [ext] Run time in ms, once exited. */
  durationMs?: number;
  /** [ext] Chunks after `afterSeq` that were evicted before this read. */
  evicted?: { fromSeq: number; toSeq: number };
  /** [ext] Sandboxed processes only, once exited: whether the sandbox caused the failure. */
  sandboxDenied?: boolean;
}

/** Params of `process/write`. */
export interface ProcessWriteParams {
  /** The process to write to. */
  processId: string;
  /** The bytes, base64. */
  chunk: string;
}

/** Result of `process/write`. */
export interface ProcessWriteResult {
  /** Always true. */
  accepted: boolean;
}

/** Params of `process/terminate`. */
export interface ProcessTerminateParams {
  /** The process to kill. */
  processId: string;
  /** [ext] SIGTERM first, SIGKILL after this many ms. */
  graceMs?: number;
}

/** Result of `process/terminate`. */
export interface ProcessTerminateResult {
  /** True when the process was running and is now being killed. */
  running: boolean;
}

/** [ext] Params of `process/closeStdin`. */
export interface ProcessCloseStdinParams {
  /** The process whose stdin to close. */
  processId: string;
}

/** [ext] Params of `process/resize`. */
export interface ProcessResizeParams extends TerminalSize {
  /** The PTY process to resize. */
  processId: string;
}

/** [ext] Params of `process/signal`. */
export interface ProcessSignalParams {
  /** The process whose group gets the signal. */
  processId: string;
  /** A POSIX name (`"SIGINT"`, `"INT"`) or `"interrupt"`. */
  signal: string;
}

/** [ext] Result of `process/signal`. */
export interface ProcessSignalResult {
  /** The signal sent, normalized (`"SIGINT"`). */
  signal: string;
}

/** Params of `fs/readFile`. */
export interface FsReadFileParams {
  /** Absolute path or `file://` URI. */
  path: string;
  /**
   * [ext] A ranged read: the first byte to return (default 0). With
   * `offset` or `length` the result also carries `size` and `eof`.
   */
  offset?: number;
  /**
   * [ext] A ranged read: at most this many bytes (default: to the end of
   * the file); at most `capabilities.limits.maxReadFileBytes`.
   */
  length?: number;
  /**
   * [ext] Send the bytes as the payload of a binary frame instead of
   * base64, where the connection carries binary frames
   * (`capabilities.binaryFrames`); see docs/protocol.md.
   */
  binaryFrame?: boolean;
}

/** Result of `fs/readFile`. */
export interface FsReadFileResult {
  /**
   * The file's bytes (or, for a ranged read, the range's), base64; a
   * `Base64Part` holding them when they came as a binary frame's payload
   * ([ext], only when the request asked for `binaryFrame`).
   */
  dataBase64: string | Base64Part;
  /** [ext] Ranged reads only: the file's size when it was read. */
  size?: number;
  /** [ext] Ranged reads only: whether the returned bytes reach the end of the file. */
  eof?: boolean;
}

/** Params of `fs/writeFile`. */
export interface FsWriteFileParams {
  /** Absolute path or `file://` URI. */
  path: string;
  /**
   * The bytes to write, base64; or, as the client library sends it, a
   * `Base64Part`: the bytes, sent as base64 or as the payload of a binary
   * frame ([ext], where `capabilities.binaryFrames` says so).
   */
  dataBase64: string | Base64Part;
  /**
   * [ext] Append to the file (created if missing) instead of replacing
   * it. Not atomic. Excludes `offset`.
   */
  append?: boolean;
  /**
   * [ext] Write at this byte offset of the file (created if missing, never
   * truncated). Not atomic. Excludes `append`.
   */
  offset?: number;
}

/** Params of `fs/createDirectory`. */
export interface FsCreateDirectoryParams {
  /** Absolute path or `file://` URI. */
  path: string;
  /** Create parents too (default true). */
  recursive?: boolean;
}

/** Params of `fs/getMetadata`. */
export interface FsGetMetadataParams {
  /** Absolute path or `file://` URI. */
  path: string;
}

/** Result of `fs/getMetadata`. */
export interface FsGetMetadataResult {
  /** True for a directory (after following symlinks). */
  isDirectory: boolean;
  /** True for a regular file (after following symlinks). */
  isFile: boolean;
  /** Creation time in ms since the epoch, 0 when unknown. */
  createdAtMs: number;
  /** Modification time in ms since the epoch, 0 when unknown. */
  modifiedAtMs: number;
}

/** Params of `fs/readDirectory`. */
export interface FsReadDirectoryParams {
  /** Absolute path or `file://` URI. */
  path: string;
}

/** One entry of `fs/readDirectory`. */
export interface FsDirectoryEntry {
  /** The entry's name (not a path). */
  fileName: string;
  /** True for a directory. */
  isDirectory: boolean;
  /** True for a regular file. */
  isFile: boolean;
}

/** Result of `fs/readDirectory`. */
export interface FsReadDirectoryResult {
  /** The directory's entries. */
  entries: FsDirectoryEntry[];
}

/** Params of `fs/remove`. */
export interface FsRemoveParams {
  /** Absolute path or `file://` URI. */
  path: string;
  /** Remove directories with their contents (default true). */
  recursive?: boolean;
  /** A missing path is success (default true). */
  force?: boolean;
}

/** Params of `fs/copy`. */
export interface FsCopyParams {
  /** Absolute source path or `file://` URI. */
  sourcePath: string;
  /** Absolute destination path or `file://` URI. */
  destinationPath: string;
  /** Needed to copy a directory (default false). */
  recursive?: boolean;
}

/** [ext] Params of `fs/rename`. */
export interface FsRenameParams {
  /** Absolute path or `file://` URI of what to move. */
  sourcePath: string;
  /** Absolute path or `file://` URI it moves to (replaced atomically if it exists). */
  destinationPath: string;
}

/** The empty result of methods that return nothing. */
export type EmptyResult = Record<string, never>;
