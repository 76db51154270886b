/**
 * JSON-RPC message shapes as exec-server.v0 sends them (no `jsonrpc`
 * member) and a classifier for received values.
 *
 * @module
 */

/** A request or response id: echoed exactly as received. */
export type RequestId = number | string;

/** A call that expects a response. */
export interface RequestMessage {
  /** The id echoed by the response. */
  id: RequestId;
  /** The method name, e.g. `process/start`. */
  method: string;
  /** The method's parameters. */
  params?: unknown;
}

/** A one-way message. */
export interface NotificationMessage {
  /** The method name, e.g. `process/output`. */
  method: string;
  /** The notification's parameters. */
  params?: unknown;
}

/** The error member of an error response. */
export interface ErrorObject {
  /** A JSON-RPC error code. */
  code: number;
  /** A message that names the offending value. */
  message: string;
  /** Structured detail, e.g. `{errno: "ENOENT"}`. */
  data?: unknown;
}

/** A successful response. */
export interface ResultResponse {
  /** The id of the request this answers. */
  id: RequestId;
  /** The method's result. */
  result: unknown;
}

/** An error response; `id` is null when the request could not be read. */
export interface ErrorResponse {
  /** The id of the request this answers, or null. */
  id: RequestId | null;
  /** What went wrong. */
  error: ErrorObject;
}

/** Any message of the protocol. */
export type Message =
  | RequestMessage
  | NotificationMessage
  | ResultResponse
  | ErrorResponse;

/** The result of {@linkcode classifyMessage}. */
export type ClassifiedMessage =
  | { kind: "request"; message: RequestMessage }
  | { kind: "notification"; message: NotificationMessage }
  | { kind: "response"; message: ResultResponse }
  | { kind: "error"; message: ErrorResponse }
  | { kind: "invalid"; id: RequestId | null; reason: string };

function isId(value: unknown): value is RequestId {
  return typeof value === "string" ||
    (typeof value === "number" && Number.isFinite(value));
}

/**
 * Sort a parsed JSON value into one of the message kinds, or explain why it
 * is none of them. The `jsonrpc` member is accepted and ignored.
 *
 * @example
 * ```ts
 * import { classifyMessage } from "./messages.ts";
 * classifyMessage({ id: 1, method: "initialize", params: {} }).kind; // "request"
 * ```
 */
export function classifyMessage(value: unknown): ClassifiedMessage {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const shape = Array.isArray(value) ? "an array" : JSON.stringify(value);
    return {
      kind: "invalid",
      id: null,
      reason: `expected a JSON object, got ${shape?.slice(0, 60)}`,
    };
  }
  const obj = value as Record<string, unknown>;
  const hasId = "id" in obj && obj.id !== undefined;
  const rawId = obj.id;
  if (typeof obj.method === "string") {
    if (!hasId) {
      return {
        kind: "notification",
        message: { method: obj.method, params: obj.params },
      };
    }
    if (!isId(rawId)) {
      return {
        kind: "invalid",
        id: null,
        reason: `request id must be an integer or a string, got ${JSON.stringify(rawId)}`,
      };
    }
    return {
      kind: "request",
      message: { id: rawId, method: obj.method, params: obj.params },
    };
  }
  if ("method" in obj) {
    return {
      kind: "invalid",
      id: isId(rawId) ? rawId : null,
      reason: `method must be a string, got ${JSON.stringify(obj.method)}`,
    };
  }
  if (hasId && isId(rawId) && "result" in obj) {
    return { kind: "response", message: { id: rawId, result: obj.result } };
  }
  if ("error" in obj && typeof obj.error === "object" && obj.error !== null) {
    const id = isId(rawId) ? rawId : null;
    const e = obj.error as Record<string, unknown>;
    return {
      kind: "error",
      message: {
        id,
        error: {
          code: typeof e.code === "number" ? e.code : 0,
          message: typeof e.message === "string" ? e.message : "",
          ...(e.data !== undefined ? { data: e.data } : {}),
        },
      },
    };
  }
  return {
    kind: "invalid",
    id: isId(rawId) ? rawId : null,
    reason: "message has neither a method nor a result or error",
  };
}
