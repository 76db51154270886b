/**
 * Server settings, their defaults, and the limits they enforce.
 *
 * @module
 */
import { createLogger, type Logger } from "./logger.ts";

/** Settings of a server; every field has a default. */
export interface ServerOptions {
  /** Output bytes retained per process for `process/read` (default 1 MiB). */
  maxOutputBytes: number;
  /** How long an exited process stays readable at most, in ms (default 30 s). */
  exitedRetentionMs: number;
  /** Running (or starting) processes per connection (default 256). */
  maxProcesses: number;
  /**
   * Exited processes kept readable per connection (default 256); beyond
   * it the oldest exit is dropped first.
   */
  maxExitedProcesses: number;
  /**
   * Retained output of a connection's exited processes, in bytes (default
   * 64 MiB); beyond it the oldest exit is dropped first. The newest exit is
   * always kept.
   */
  maxExitedOutputBytes: number;
  /** The largest accepted incoming message, in bytes (default 128 MiB). */
  maxMessageBytes: number;
  /** The largest file `fs/readFile` returns, in bytes (default 128 MiB). */
  maxReadFileBytes: number;
  /** Silence after a child's exit that ends the wait for its output (default 250 ms). */
  exitDrainMs: number;
  /**
   * Queued outgoing bytes above which a connection's processes pause
   * (default 4 MiB: 8 MiB moved no more output per second, and cost ~5 MiB
   * more of peak memory under full-speed output).
   */
  outputHighWaterBytes: number;
  /**
   * How long a Codex-dialect session's processes outlive a dropped
   * connection, waiting for the client to resume (default 60 s: the CLI
   * 0.171 tries to resume for 45 s; upstream keeps 30 s, so a drop of 30
   * to 45 s loses the command there).
   */
  sessionGraceMs: number;
  /**
   * **[ext]** The longest a v0 session's process may ask to outlive its
   * connection (`process/start`'s `ttlMs`), in ms (default 24 h).
   */
  maxTtlMs: number;
  /**
   * Where sessions are found by later servers of the same user: a private
   * directory holding one socket per session (session_dir.ts). Undefined:
   * a session is resumable only through the server that holds it.
   */
  sessionDir: string | undefined;
  /** Where diagnostics go. */
  logger: Logger;
}

/** The defaults of {@linkcode ServerOptions}. */
export const DEFAULT_SERVER_OPTIONS: Readonly<ServerOptions> = Object.freeze({
  maxOutputBytes: 1024 * 1024,
  exitedRetentionMs: 30_000,
  maxProcesses: 256,
  maxExitedProcesses: 256,
  maxExitedOutputBytes: 64 * 1024 * 1024,
  // V8 aborts the whole process (not a catchable error) when JSON text
  // nears 2^28 characters: a ~201 MB file's base64 answer did. 128 MiB
  // keeps every message well below that in both directions.
  maxMessageBytes: 128 * 1024 * 1024,
  maxReadFileBytes: 128 * 1024 * 1024,
  exitDrainMs: 250,
  outputHighWaterBytes: 4 * 1024 * 1024,
  sessionGraceMs: 60_000,
  maxTtlMs: 24 * 3_600_000,
  sessionDir: undefined,
  logger: createLogger("warn"),
});

/** Fill in defaults for the fields not given. */
export function resolveServerOptions(
  partial: Partial<ServerOptions> = {},
): ServerOptions {
  const out = { ...DEFAULT_SERVER_OPTIONS } as ServerOptions;
  for (const [key, value] of Object.entries(partial)) {
    if (value !== undefined) (out as unknown as Record<string, unknown>)[key] = value;
  }
  return out;
}
