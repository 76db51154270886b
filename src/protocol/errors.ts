/**
 * JSON-RPC error codes used by exec-server and the error class that carries
 * them across the wire.
 *
 * @module
 */

/** The error codes of the exec-server.v0 protocol (JSON-RPC 2.0 codes). */
export const ErrorCode = {
  /** A line or frame that is not JSON. */
  ParseError: -32700,
  /** Bad request: handshake order, unknown/duplicate process id, limits. */
  InvalidRequest: -32600,
  /** The method does not exist. */
  MethodNotFound: -32601,
  /** A parameter is missing, mistyped or out of range. */
  InvalidParams: -32602,
  /** The server failed to do what was asked (spawn, I/O). */
  InternalError: -32603,
} as const;

/** One of the numeric codes in {@linkcode ErrorCode}. */
export type ErrorCodeValue = typeof ErrorCode[keyof typeof ErrorCode];

/** The optional `data` member of an error; `errno` names a POSIX error. */
export interface RpcErrorData {
  /** POSIX error name such as `"ENOENT"`. */
  errno?: string;
  /** Any further detail a method adds. */
  [key: string]: unknown;
}

/**
 * An error that becomes a JSON-RPC error response.
 *
 * @example
 * ```ts
 * import { ErrorCode, RpcError } from "./errors.ts";
 * throw new RpcError(ErrorCode.InvalidRequest, "unknown process id proc-7");
 * ```
 */
export class RpcError extends Error {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** Extra structured information, sent as `error.data`. */
  readonly data: RpcErrorData | undefined;

  /** Create an error with a code, a message naming the bad value, and data. */
  constructor(code: number, message: string, data?: RpcErrorData) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }
}

/** Shorthand for an `InvalidParams` (-32602) error. */
export function invalidParams(message: string, data?: RpcErrorData): RpcError {
  return new RpcError(ErrorCode.InvalidParams, message, data);
}

/** Shorthand for an `InvalidRequest` (-32600) error. */
export function invalidRequest(message: string, data?: RpcErrorData): RpcError {
  return new RpcError(ErrorCode.InvalidRequest, message, data);
}

/** Shorthand for an `InternalError` (-32603) error. */
export function internalError(message: string, data?: RpcErrorData): RpcError {
  return new RpcError(ErrorCode.InternalError, message, data);
}
