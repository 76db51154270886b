/**
 * Command-line parsing for the `exec-server` binary.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { LOG_LEVELS, type LogLevel } from "../server/logger.ts";

/** Thrown for a bad command line; the message names the flag and value. */
export class UsageError extends Error {
  /** @param message what is wrong */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Where to listen. */
export type ListenAddress =
  | { kind: "stdio" }
  | { kind: "ws"; hostname: string; port: number };

/** The parsed command line. */
export interface CliOptions {
  /** `--help` was given. */
  help: boolean;
  /** `--version` was given. */
  version: boolean;
  /** `--listen`. */
  listen: ListenAddress;
  /** `--max-output-bytes`. */
  maxOutputBytes?: number;
  /** `--exited-retention-ms`. */
  exitedRetentionMs?: number;
  /** `--max-processes`. */
  maxProcesses?: number;
  /** `--session-grace-ms`. */
  sessionGraceMs?: number;
  /** `--max-ttl-ms`. */
  maxTtlMs?: number;
  /** `--session-dir` (a path), or null for `--no-session-dir`; undefined: the default. */
  sessionDir?: string | null;
  /** `--max-exited-processes`. */
  maxExitedProcesses?: number;
  /** `--max-exited-output-bytes`. */
  maxExitedOutputBytes?: number;
  /** `--max-message-bytes`. */
  maxMessageBytes?: number;
  /** `--max-read-file-bytes`. */
  maxReadFileBytes?: number;
  /** `--exit-drain-ms`. */
  exitDrainMs?: number;
  /** `--output-high-water-bytes`. */
  outputHighWaterBytes?: number;
  /** `--shutdown-grace-ms`. */
  shutdownGraceMs: number;
  /** `--log-level`. */
  logLevel: LogLevel;
  /** `--max-connections` (websocket). */
  maxConnections?: number;
  /** `--token-file` (websocket). */
  tokenFile?: string;
  /** `--no-auth` (websocket). */
  noAuth: boolean;
  /** `--allow-origin` (websocket), repeatable. */
  allowOrigins: string[];
}

/** The text of `exec-server --help`. */
export const HELP = `exec-server: run processes and file operations for a remote client

Usage: exec-server [--listen stdio://|ws://HOST:PORT] [flags]
       exec-server mcp [flags]      an MCP server (see exec-server mcp --help)

Speaks the exec-server.v0 JSON-RPC protocol (newline-delimited JSON on
stdin/stdout by default). Logs go to stderr only.

Transport:
  --listen URL                 stdio:// (default) or ws://HOST:PORT (port 0 picks one)
  --token-file PATH            websocket: the bearer token clients must send
                               (default on loopback: a generated token printed to
                               stderr; required on other addresses unless --no-auth)
  --no-auth                    websocket: accept clients without a token (trusted setups only)
  --allow-origin ORIGIN        websocket: accept browser requests from ORIGIN (repeatable)
  --max-connections N          websocket: concurrent connections (default 64)

Limits (sizes accept K, M, G suffixes: 1M = 1048576):
  --max-output-bytes N         output retained per process for process/read (default 1M)
  --exited-retention-ms N      how long an exited process stays readable (default 30000)
  --max-processes N            running processes per connection (default 256)
  --max-exited-processes N     exited processes kept readable per connection; the
                               oldest exit is dropped first (default 256)
  --max-exited-output-bytes N  output kept across a connection's exited processes;
                               the oldest exit is dropped first (default 64M)
  --max-message-bytes N        largest incoming message (default 128M)
  --max-read-file-bytes N      largest file fs/readFile returns (default 128M)
  --exit-drain-ms N            after a child exits, how long its output may stay
                               silent before a leftover grandchild's open pipe is
                               closed (default 250)
  --output-high-water-bytes N  queued output at which processes pause (default 4M)
  --shutdown-grace-ms N        on SIGTERM/SIGINT: SIGTERM children, SIGKILL after N ms (default 2000)
  --session-grace-ms N         sessions (Codex dialect, v0 with "session"): how long a dropped
                               connection's processes keep running for the client to resume
                               (default 60000)
  --max-ttl-ms N               the longest ttlMs a v0 session's process may ask for (default 24h
                               = 86400000)
  --session-dir DIR            where this user's servers find each other's sessions, so that a
                               new server (a new ssh) resumes a session an ended one still
                               holds; must be private to the user (default
                               $XDG_RUNTIME_DIR/exec-server, else $TMPDIR/exec-server-UID)
  --no-session-dir             sessions resume only through the server that holds them; an
                               ended stdio server ends its sessions at once

Other:
  --log-level LEVEL            off, error, warn (default), info, debug
  --version                    print the version and the runtime, then exit
  --help                       print this help, then exit
`;

/** `--session-dir` and `--no-session-dir`, which exclude each other. */
function parseSessionDir(dir: string | undefined, none: boolean): string | null | undefined {
  if (none && dir !== undefined) {
    throw new UsageError("--session-dir and --no-session-dir exclude each other");
  }
  if (none) return null;
  if (dir !== undefined && !dir.startsWith("/")) {
    throw new UsageError(`--session-dir must be an absolute path, got ${JSON.stringify(dir)}`);
  }
  return dir;
}

const SIZE_RE = /^(\d+)([KMG]i?B?)?$/i;

function parseCount(flag: string, text: string | undefined, min = 0): number | undefined {
  if (text === undefined) return undefined;
  const m = SIZE_RE.exec(text.trim());
  if (!m) throw new UsageError(`--${flag} must be a whole number, got ${JSON.stringify(text)}`);
  const unit = (m[2] ?? "").toUpperCase()[0];
  const mult = unit === "K" ? 1024 : unit === "M" ? 1024 ** 2 : unit === "G" ? 1024 ** 3 : 1;
  const value = Number(m[1]) * mult;
  if (!Number.isSafeInteger(value)) {
    throw new UsageError(`--${flag} is too large: ${JSON.stringify(text)}`);
  }
  if (value < min) {
    throw new UsageError(`--${flag} must be at least ${min}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** Parse `--listen`. */
export function parseListen(text: string): ListenAddress {
  if (text === "stdio://" || text === "stdio") return { kind: "stdio" };
  if (!text.startsWith("ws://")) {
    throw new UsageError(
      `--listen must be stdio:// or ws://HOST:PORT, got ${JSON.stringify(text)}`,
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--listen is not a valid URL: ${JSON.stringify(text)}`);
  }
  if ((url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "") {
    throw new UsageError(`--listen takes no path or query, got ${JSON.stringify(text)}`);
  }
  // URL drops a port equal to the scheme's default (80), so read it from
  // the text itself.
  const port = /:(\d+)\/?$/.exec(text);
  if (!port) {
    throw new UsageError(
      `--listen ws:// needs a port (0 picks a free one), got ${JSON.stringify(text)}`,
    );
  }
  if (Number(port[1]) > 65535) {
    throw new UsageError(`--listen port must be at most 65535, got ${JSON.stringify(text)}`);
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return { kind: "ws", hostname, port: Number(port[1]) };
}

/** Parse `--log-level` (default `warn`). */
export function parseLogLevel(text: string | undefined): LogLevel {
  const level = (text ?? "warn") as LogLevel;
  if (!LOG_LEVELS.includes(level)) {
    throw new UsageError(
      `--log-level must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(text)}`,
    );
  }
  return level;
}

/**
 * Parse the command line (without the program name).
 *
 * @throws {UsageError} for unknown flags or bad values
 */
export function parseCliArgs(args: string[]): CliOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "V" },
        listen: { type: "string" },
        "max-output-bytes": { type: "string" },
        "exited-retention-ms": { type: "string" },
        "max-processes": { type: "string" },
        "max-exited-processes": { type: "string" },
        "max-exited-output-bytes": { type: "string" },
        "max-message-bytes": { type: "string" },
        "max-read-file-bytes": { type: "string" },
        "exit-drain-ms": { type: "string" },
        "output-high-water-bytes": { type: "string" },
        "shutdown-grace-ms": { type: "string" },
        "session-grace-ms": { type: "string" },
        "max-ttl-ms": { type: "string" },
        "session-dir": { type: "string" },
        "no-session-dir": { type: "boolean" },
        "log-level": { type: "string" },
        "max-connections": { type: "string" },
        "token-file": { type: "string" },
        "no-auth": { type: "boolean" },
        "allow-origin": { type: "string", multiple: true },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  const logLevel = parseLogLevel(v["log-level"]);
  return {
    help: v.help ?? false,
    version: v.version ?? false,
    listen: parseListen(v.listen ?? "stdio://"),
    maxOutputBytes: parseCount("max-output-bytes", v["max-output-bytes"], 1),
    exitedRetentionMs: parseCount("exited-retention-ms", v["exited-retention-ms"]),
    maxProcesses: parseCount("max-processes", v["max-processes"], 1),
    maxExitedProcesses: parseCount("max-exited-processes", v["max-exited-processes"], 1),
    maxExitedOutputBytes: parseCount("max-exited-output-bytes", v["max-exited-output-bytes"]),
    maxMessageBytes: parseCount("max-message-bytes", v["max-message-bytes"], 1024),
    maxReadFileBytes: parseCount("max-read-file-bytes", v["max-read-file-bytes"]),
    exitDrainMs: parseCount("exit-drain-ms", v["exit-drain-ms"]),
    outputHighWaterBytes: parseCount("output-high-water-bytes", v["output-high-water-bytes"], 1024),
    shutdownGraceMs: parseCount("shutdown-grace-ms", v["shutdown-grace-ms"]) ?? 2000,
    sessionGraceMs: parseCount("session-grace-ms", v["session-grace-ms"]),
    maxTtlMs: parseCount("max-ttl-ms", v["max-ttl-ms"], 1),
    sessionDir: parseSessionDir(v["session-dir"], v["no-session-dir"] ?? false),
    logLevel,
    maxConnections: parseCount("max-connections", v["max-connections"], 1),
    tokenFile: v["token-file"],
    noAuth: v["no-auth"] ?? false,
    allowOrigins: v["allow-origin"] ?? [],
  };
}
