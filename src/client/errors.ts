/**
 * The errors the client throws, one class per way a call can fail, so
 * callers can branch with `instanceof` instead of parsing messages.
 *
 * @module
 */
import type { RemoteError } from "../rpc/peer.ts";

/**
 * The transport could not be established: refused, unauthorized, or the
 * server program could not be started.
 *
 * @example
 * ```ts
 * import { ConnectError, ExecServerClient } from "../../mod.ts";
 * try {
 *   await ExecServerClient.connectWebSocket("ws://127.0.0.1:1");
 * } catch (err) {
 *   if (err instanceof ConnectError) console.error(err.target, err.message);
 * }
 * ```
 */
export class ConnectError extends Error {
  /** What the client tried to reach (a URL or a command line). */
  readonly target: string;

  /**
   * Describe the failed connection.
   *
   * @param target the URL or command
   * @param detail what went wrong
   */
  constructor(target: string, detail: string, options?: { cause?: unknown }) {
    super(`cannot connect to ${target}: ${detail}`, options);
    this.name = "ConnectError";
    this.target = target;
  }
}

/** A step of connecting did not finish in time (the two classes below). */
export class ClientTimeoutError extends Error {
  /** What the client tried to reach or was talking to. */
  readonly target: string;
  /** The limit that passed, in ms. */
  readonly timeoutMs: number;

  /**
   * Describe the step that took too long.
   *
   * @param message says which step
   * @param target what it was for
   * @param timeoutMs the limit that passed
   */
  constructor(message: string, target: string, timeoutMs: number) {
    super(message);
    this.target = target;
    this.timeoutMs = timeoutMs;
  }
}

/** The transport was not established within `connectTimeoutMs`. */
export class ConnectTimeoutError extends ClientTimeoutError {
  /**
   * Describe the connection that took too long.
   *
   * @param target the URL or command
   * @param timeoutMs the limit that passed
   */
  constructor(target: string, timeoutMs: number) {
    super(`connecting to ${target} timed out after ${timeoutMs} ms`, target, timeoutMs);
    this.name = "ConnectTimeoutError";
  }
}

/** The server did not answer `initialize` within `initializeTimeoutMs`. */
export class InitializeTimeoutError extends ClientTimeoutError {
  /**
   * Describe the handshake that took too long.
   *
   * @param target the server's description
   * @param timeoutMs the limit that passed
   */
  constructor(target: string, timeoutMs: number) {
    super(`${target} did not answer initialize within ${timeoutMs} ms`, target, timeoutMs);
    this.name = "InitializeTimeoutError";
  }
}

/**
 * The server answered a request with a JSON-RPC error.
 *
 * @example
 * ```ts
 * import { ServerError } from "./errors.ts";
 * const err = new ServerError("fs/readFile", { code: -32603, message: "no such file", data: { errno: "ENOENT" } });
 * err.errno; // "ENOENT"
 * ```
 */
export class ServerError extends Error {
  /** The method that failed, e.g. `fs/readFile`. */
  readonly method: string;
  /** The JSON-RPC error code, e.g. -32600. */
  readonly code: number;
  /** The error's `data` member as sent. */
  readonly data: unknown;
  /** The server's message, without the method and code this error's message adds. */
  readonly serverMessage: string;

  /** Build from the method and the wire's error object. */
  constructor(
    method: string,
    error: { code: number; message: string; data?: unknown },
  ) {
    super(`${method} failed: ${error.message} (code ${error.code})`);
    this.name = "ServerError";
    this.method = method;
    this.code = error.code;
    this.data = error.data;
    this.serverMessage = error.message;
  }

  /** `data.errno` (a POSIX error name such as `ENOENT`) when the server sent one. */
  get errno(): string | undefined {
    const data = this.data as { errno?: unknown } | null | undefined;
    return typeof data?.errno === "string" ? data.errno : undefined;
  }

  /** Wrap the peer's {@linkcode RemoteError}, recovering the server's own message. */
  static fromRemote(err: RemoteError, method: string): ServerError {
    // RemoteError formats "<method>: <message> (code <code>)"; undo exactly that.
    let message = err.message;
    const prefix = `${method}: `;
    const suffix = ` (code ${err.code})`;
    if (message.startsWith(prefix)) message = message.slice(prefix.length);
    if (message.endsWith(suffix)) message = message.slice(0, -suffix.length);
    return new ServerError(method, { code: err.code, message, data: err.data });
  }
}

/**
 * The connection ended: pending calls reject with this, and so does every
 * call made afterwards.
 */
export class ConnectionClosedError extends Error {
  /** Why the connection ended. */
  readonly reason: string;

  /**
   * Say why the connection ended.
   *
   * @param reason why the connection ended
   */
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`connection closed: ${reason}`, options);
    this.name = "ConnectionClosedError";
    this.reason = reason;
  }
}

/**
 * A process could not be started. `errno` names the cause when it is known
 * (`ENOENT` for a missing program or cwd, `EACCES`, ...).
 */
export class SpawnError extends Error {
  /** The program that was to run. */
  readonly argv: readonly string[];
  /** The POSIX error name, when known. */
  readonly errno: string | undefined;

  /**
   * Describe the process that could not start.
   *
   * @param argv the command
   * @param detail what went wrong
   * @param errno its error name
   */
  constructor(
    argv: readonly string[],
    detail: string,
    errno: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(`cannot start ${JSON.stringify(argv[0])}: ${detail}`, options);
    this.name = "SpawnError";
    this.argv = argv;
    this.errno = errno;
  }
}

/**
 * An operation on a started process failed: writing to closed stdin,
 * resizing a process without a terminal, an unknown signal name, ...
 */
export class ProcessError extends Error {
  /** The process's id. */
  readonly processId: string;
  /** The operation, e.g. `write` or `resize`. */
  readonly operation: string;

  /**
   * Describe the failed operation on a process.
   *
   * @param processId the process
   * @param operation what was attempted
   * @param detail why it failed
   */
  constructor(
    processId: string,
    operation: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${operation} on process ${processId} failed: ${detail}`, options);
    this.name = "ProcessError";
    this.processId = processId;
    this.operation = operation;
  }
}
