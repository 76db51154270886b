/**
 * The dialect the Codex CLI 0.171 speaks to a remote exec-server, beside
 * exec-server.v0. A `resumeSessionId` key in `initialize` (even `null`)
 * marks it; from then on the connection is answered in these shapes. Only
 * what differs from v0 is declared here.
 *
 * @module
 */
import type { RequestType } from "./descriptors.ts";
import type { StreamName, TerminalSize } from "./methods.ts";

/** Params of `initialize` in the Codex dialect. */
export interface CodexInitializeParams {
  /** A name for the client, used in logs. */
  clientName: string;
  /** The session to reattach to after a dropped connection, or null for a new one. */
  resumeSessionId: string | null;
}

/** What the server tells the CLI about the host. Paths are `file://` URIs. */
export interface EnvironmentInfo {
  /** The login shell commands run in. */
  shell: { name: string; path: string };
  /** This server's name and version. */
  executorVersion: string;
  /** The server's working directory. */
  cwd: string;
  /** The home directory of the user the server runs as. */
  userHomeDir: string;
  /** `linux` or `macos`. */
  platformOs: string;
  /** Directories the CLI should put in front of PATH (none). */
  prependPathDirs: string[];
  /** Extra temporary directories (none). */
  temporaryDirectories: string[];
  /** The temporary directory. */
  tempDir: string;
  /** Optional methods that are implemented, by flag name. */
  capabilities: Record<string, boolean>;
}

/** Result of `initialize` in the Codex dialect. */
export interface CodexInitializeResult {
  /** The session's id: the same one when a resume succeeded. */
  sessionId: string;
  /** The host, so the CLI needs no `environment/info` round trip. */
  environmentInfo: EnvironmentInfo;
}

/** How the child's environment is built on the server (see env_policy.ts). */
export interface EnvPolicy {
  /** Start from all, only the core, or none of the server's variables. */
  inherit: "all" | "core" | "none";
  /** Keep names matching `*KEY*`, `*SECRET*`, `*TOKEN*` (dropped by default). */
  ignoreDefaultExcludes: boolean;
  /** Glob patterns of names to drop. */
  exclude: string[];
  /** Variables to set. */
  set: Record<string, string>;
  /** When not empty, keep only names matching one of these globs. */
  includeOnly: string[];
}

/** Params of `process/start` in the Codex dialect. */
export interface CodexProcessStartParams {
  /** Client-chosen id, unique within the session. */
  processId: string;
  /** Program and arguments. */
  argv: string[];
  /** Working directory, a `file://` URI or an absolute path. */
  cwd: string;
  /** Laid over what `envPolicy` built. */
  env: Record<string, string>;
  /** Builds the base environment on the server. */
  envPolicy?: EnvPolicy | null;
  /** Run under a pseudo-terminal. */
  tty: boolean;
  /** Keep stdin open for a pipe process. */
  pipeStdin?: boolean;
  /** Overrides the `argv[0]` the child sees. */
  arg0?: string | null;
  /** A permission set to enforce, or null for none. */
  sandbox?: unknown;
  /** The CLI's bookkeeping (thread and tool call ids); logged, not used. */
  metadata?: unknown;
  /** Initial terminal size. */
  size?: TerminalSize;
}

/** Result of `process/start` in the Codex dialect. */
export interface CodexProcessStartResult {
  /** The id, as given. */
  processId: string;
  /** The sandbox the process runs in: `none` until sandboxing lands. */
  sandboxType: string;
}

/** Params of `process/write` in the Codex dialect. */
export interface CodexProcessWriteParams {
  /** The process. */
  processId: string;
  /** Base64 bytes for stdin. */
  chunk: string;
  /** Makes the write idempotent: a repeated id is not written twice. */
  writeId?: string | number | null;
}

/** Result of `process/write`: the outcome is a status, not an error. */
export interface CodexProcessWriteResult {
  /** `accepted`, `stdinClosed` or `unknownProcess`. */
  status: "accepted" | "stdinClosed" | "unknownProcess";
}

/** One chunk of a Codex `process/read` result. */
export interface CodexReadChunk {
  /** Sequence number. */
  seq: number;
  /** The stream it came from. */
  stream: StreamName;
  /** Base64 bytes. */
  chunk: string;
}

/** Result of `process/read` in the Codex dialect. */
export interface CodexProcessReadResult {
  /** Chunks after `afterSeq`. */
  chunks: CodexReadChunk[];
  /** The seq to read after next. */
  nextSeq: number;
  /** Whether the exit is known (reported with the last chunk). */
  exited: boolean;
  /** The exit code once exited. */
  exitCode: number | null;
  /** Whether every output and the exit have been delivered. */
  closed: boolean;
  /** Why the process failed without an exit code, or null. */
  failure: string | null;
  /** Whether a sandbox denied what the process tried. */
  sandboxDenied: boolean;
  /** [ext] The signal that ended it, once exited (as in v0). */
  signal?: string | null;
  /** [ext] Its run time in ms, once exited (as in v0). */
  durationMs?: number;
}

/** Params of `fs/canonicalize`. */
export interface FsCanonicalizeParams {
  /** A `file://` URI. */
  path: string;
}

/**
 * Params of `fs/watchMissing`. A session holds one watch; a request whose
 * `watchId` is not above every one seen is ignored (`{watching: false}`).
 */
export interface FsWatchMissingParams {
  /** The client's id for this watch, a non-negative integer; `fs/missingChanged` names it. */
  watchId: number;
  /** `file://` URIs that do not exist yet (an empty list watches nothing). */
  missing: string[];
  /** One path that exists now (the CLI 0.171 sends its `.git`): a change is its removal. */
  present?: string | null;
}

/** A dotted path into a TOML document, one key per segment. */
export type TomlPath = string[];

/** Params of `environmentConfig/read`. */
export interface EnvironmentConfigReadParams {
  /** The client's working directory (its trusted project's `.codex/config.toml` is a layer). */
  cwd: string;
  /** The parts of the configuration wanted (the CLI 0.171 asks `[["mcp_servers"]]`). */
  configPaths: TomlPath[];
  /** The parts of the requirements wanted. */
  requirementsPaths: TomlPath[];
}

/** One configuration file's contribution. */
export interface ConfigLayer {
  /** Where it came from, as upstream words it (`user (/root/.codex/config.toml)`). */
  source: string;
  /** Its directory, a `file://` URI (relative paths in it are relative to this). */
  baseDir: string;
  /** The asked-for parts of it, as TOML. */
  toml: string;
}

/** The layers of one kind, and where a managed (cloud) layer would go between them. */
export interface ConfigLayers {
  /** In order of increasing precedence. */
  layers: ConfigLayer[];
  /** How many of `layers` come before a cloud layer. */
  cloudInsertionIndex: number;
}

/** The result of `environmentConfig/read`. */
export interface EnvironmentConfig {
  /** The home directory of the user the server runs as (a `file://` URI). */
  userHomeDir: string;
  /** The host's `$CODEX_HOME` (a `file://` URI). */
  codexHomeDir: string;
  /** This host's name. */
  hostname: string;
  /** The configuration layers. */
  config: ConfigLayers;
  /** The requirements layers (what an administrator imposes). */
  requirements: ConfigLayers;
}

/** Result of `environment/status`. */
export interface EnvironmentStatus {
  /** Always `ready`: the server has nothing to prepare. */
  status: "ready";
}

/** The Codex dialect's requests that v0 does not have, or answers differently. */
export const CodexRequests: {
  readonly environmentInfo: RequestType<Record<string, never>, EnvironmentInfo>;
  readonly environmentStatus: RequestType<Record<string, never>, EnvironmentStatus>;
  readonly environmentConfigRead: RequestType<EnvironmentConfigReadParams, EnvironmentConfig>;
  readonly fsCanonicalize: RequestType<FsCanonicalizeParams, { path: string }>;
  readonly fsWatchMissing: RequestType<FsWatchMissingParams, { watching: boolean }>;
} = Object.freeze({
  environmentInfo: Object.freeze({ method: "environment/info", kind: "request" as const }),
  environmentStatus: Object.freeze({ method: "environment/status", kind: "request" as const }),
  environmentConfigRead: Object.freeze({
    method: "environmentConfig/read",
    kind: "request" as const,
  }),
  fsCanonicalize: Object.freeze({ method: "fs/canonicalize", kind: "request" as const }),
  fsWatchMissing: Object.freeze({ method: "fs/watchMissing", kind: "request" as const }),
});

/** Notification names of the Codex dialect that v0 does not have. */
export const CodexNotificationNames: {
  readonly processClosed: "process/closed";
  readonly fsMissingChanged: "fs/missingChanged";
} = Object.freeze({
  processClosed: "process/closed",
  fsMissingChanged: "fs/missingChanged",
});

/** The JSON-RPC code the Codex dialect uses for a path that does not exist. */
export const NOT_FOUND_CODE = -32004;

/**
 * Whether `initialize` params ask for the Codex dialect: a
 * `resumeSessionId` key, even `null`.
 *
 * @example
 * ```ts
 * import { isCodexInitialize } from "./codex.ts";
 * isCodexInitialize({ clientName: "codex-environment", resumeSessionId: null }); // true
 * isCodexInitialize({ clientName: "me" }); // false
 * ```
 */
export function isCodexInitialize(params: unknown): boolean {
  return typeof params === "object" && params !== null && "resumeSessionId" in params;
}
