/**
 * A levelled logger that writes to stderr only: stdout belongs to the
 * protocol.
 *
 * @module
 */

/** Log levels, most severe first. */
export const LOG_LEVELS = ["off", "error", "warn", "info", "debug"] as const;

/** One of {@linkcode LOG_LEVELS}. */
export type LogLevel = typeof LOG_LEVELS[number];

/** A minimal logger. */
export interface Logger {
  /** Something failed. */
  error(message: string): void;
  /** Something is off but handled. */
  warn(message: string): void;
  /** Lifecycle events. */
  info(message: string): void;
  /** Per-message detail. */
  debug(message: string): void;
}

/**
 * A logger that prints `exec-server: LEVEL message` lines to stderr for
 * messages at or above `level`.
 */
export function createLogger(level: LogLevel): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const at = (l: LogLevel) => (message: string) => {
    if (LOG_LEVELS.indexOf(l) <= rank) console.error(`exec-server: ${l} ${message}`);
  };
  return {
    error: at("error"),
    warn: at("warn"),
    info: at("info"),
    debug: at("debug"),
  };
}
