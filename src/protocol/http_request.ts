/**
 * `http/request`: an HTTP request made from the server's host, so that a
 * client can reach what only that host reaches (the Codex CLI 0.171 speaks
 * to a remote environment's MCP servers this way). The shapes are
 * upstream's; the checks here are pure, the request itself is made by
 * ../server/http_request.ts. **[ext]** v0 clients get it too
 * (`capabilities.http`).
 *
 * @module
 */
import { decodeBase64, InvalidBase64Error } from "./base64.ts";
import type { NotificationType, RequestType } from "./descriptors.ts";
import { invalidParams } from "./errors.ts";
import { show } from "./show.ts";

/** One header, in order; a name may repeat. */
export interface HttpHeader {
  /** As it goes on the wire (case does not matter to HTTP). */
  name: string;
  /** The value, or its prefix when `valueEnvVar` is given. */
  value: string;
  /**
   * Append the value of this variable of the server's own environment
   * (a token the client does not hold): it must be set and not empty.
   */
  valueEnvVar?: string | null;
}

/** Params of `http/request`. */
export interface HttpRequestParams {
  /** `GET`, `POST`, … (any token; sent as given). */
  method: string;
  /** An absolute `http://` or `https://` URL. */
  url: string;
  /** Request headers, in order. */
  headers?: HttpHeader[];
  /** The request body, base64. */
  bodyBase64?: string | null;
  /** A deadline for the whole exchange, body included; none when absent or null. */
  timeoutMs?: number | null;
  /** `follow` (default: up to 10 redirects) or `stop` (a 3xx is the answer). */
  redirectPolicy?: "follow" | "stop";
  /** The client's id of the request: names its `http/request/bodyDelta` notifications. */
  requestId: string;
  /** Answer once the head has arrived and stream the body as notifications. */
  streamResponse?: boolean;
  /** **[ext]** A sandbox whose network is restricted refuses the request. */
  sandbox?: unknown;
}

/** Result of `http/request`. */
export interface HttpRequestResult {
  /** The status code. */
  status: number;
  /** Response headers, names in lower case, repeats kept. */
  headers: { name: string; value: string }[];
  /** The whole body, base64; empty when streamed. */
  bodyBase64: string;
}

/** One piece of a streamed body: `seq` from 1; the last has `done` and no bytes. */
export interface HttpBodyDeltaParams {
  /** The request's id. */
  requestId: string;
  /** 1, 2, … without gaps. */
  seq: number;
  /** Bytes of the body, base64. */
  deltaBase64: string;
  /** The body is complete (or failed: see `error`). */
  done: boolean;
  /** Why the body ended early, on the last notification only. */
  error: string | null;
}

/** The `http/request` request. */
export const HttpRequest: RequestType<HttpRequestParams, HttpRequestResult> = Object.freeze({
  method: "http/request",
  kind: "request" as const,
});

/** The notification a streamed body travels in. */
export const HttpBodyDelta: NotificationType<HttpBodyDeltaParams> = Object.freeze({
  method: "http/request/bodyDelta",
  kind: "notification" as const,
});

/** The most redirects followed (as upstream). */
export const MAX_REDIRECTS = 10;

/** A request, checked: everything the server needs to make it. */
export interface CheckedHttpRequest {
  /** As given. */
  method: string;
  /** Parsed. */
  url: URL;
  /** With every `valueEnvVar` resolved. */
  headers: [string, string][];
  /** The body (empty for none). */
  body: Uint8Array;
  /** Undefined for none. */
  timeoutMs: number | undefined;
  /** Whether redirects are followed. */
  follow: boolean;
  /** As given. */
  requestId: string;
  /** As given. */
  stream: boolean;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// A header value may carry tabs, visible ASCII and spaces, and anything
// beyond ASCII (sent as UTF-8); any other control character (a CR or LF
// would split the request) is refused.
const BAD_VALUE = /[^\t\x20-\x7e\u0080-\u{10ffff}]/u;

function optionalString(p: Record<string, unknown>, field: string): string | undefined {
  const v = p[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw invalidParams(`${field} must be a string, got ${show(v)}`);
  return v;
}

/** The headers, each `valueEnvVar` resolved in `env`. */
function checkHeaders(value: unknown, env: Record<string, string | undefined>): [string, string][] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw invalidParams(`headers must be an array of {name, value}, got ${show(value)}`);
  }
  return value.map((h, i) => {
    if (typeof h !== "object" || h === null || Array.isArray(h)) {
      throw invalidParams(`headers[${i}] must be an object {name, value}, got ${show(h)}`);
    }
    const { name, value: v, valueEnvVar } = h as Record<string, unknown>;
    if (typeof name !== "string" || !TOKEN.test(name)) {
      throw invalidParams(`http/request header name is invalid: ${show(name)}`);
    }
    if (typeof v !== "string") {
      throw invalidParams(`headers[${i}].value must be a string, got ${show(v)}`);
    }
    let full = v;
    if (valueEnvVar !== undefined && valueEnvVar !== null) {
      if (typeof valueEnvVar !== "string") {
        throw invalidParams(`headers[${i}].valueEnvVar must be a string, got ${show(valueEnvVar)}`);
      }
      const found = env[valueEnvVar];
      if (found === undefined) {
        throw invalidParams(
          `http/request header ${name} requires executor environment variable ${valueEnvVar}`,
        );
      }
      if (found === "") {
        throw invalidParams(
          `http/request header ${name} requires a non-empty executor environment variable ${valueEnvVar}`,
        );
      }
      full = v + found;
    }
    if (BAD_VALUE.test(full)) {
      throw invalidParams(`http/request header value is invalid for ${name}: control characters`);
    }
    return [name.toLowerCase(), full];
  });
}

/** The URL, absolute and http(s). */
function checkUrl(value: unknown): URL {
  if (typeof value !== "string") throw invalidParams(`url must be a string, got ${show(value)}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidParams(`http/request url is invalid: ${show(value)} is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalidParams(
      `http/request only supports http and https URLs, got ${url.protocol.slice(0, -1)}`,
    );
  }
  return url;
}

/**
 * Check `http/request` params, resolving header variables in `env`.
 *
 * @throws {RpcError} -32602 naming the bad field, as upstream's checks do
 *
 * @example
 * ```ts
 * import { checkHttpRequest } from "./http_request.ts";
 * const r = checkHttpRequest(
 *   { method: "GET", url: "http://127.0.0.1:8080/", requestId: "r1" },
 *   {},
 * );
 * r.follow; // true
 * ```
 */
export function checkHttpRequest(
  p: Record<string, unknown>,
  env: Record<string, string | undefined>,
): CheckedHttpRequest {
  for (const field of ["method", "url", "requestId"]) {
    if (p[field] === undefined) throw invalidParams(`missing field \`${field}\``);
  }
  const requestId = optionalString(p, "requestId")!;
  const stream = p.streamResponse ?? false;
  if (typeof stream !== "boolean") {
    throw invalidParams(`streamResponse must be a boolean, got ${show(stream)}`);
  }
  let body: Uint8Array = new Uint8Array();
  const bodyText = optionalString(p, "bodyBase64");
  try {
    if (bodyText) body = decodeBase64(bodyText);
  } catch (err) {
    if (err instanceof InvalidBase64Error) throw invalidParams(`bodyBase64: ${err.message}`);
    throw err;
  }
  const method = optionalString(p, "method")!;
  if (!TOKEN.test(method)) throw invalidParams(`http/request method is invalid: ${show(method)}`);
  const url = checkUrl(p.url);
  const timeout = p.timeoutMs ?? undefined;
  if (
    timeout !== undefined &&
    (typeof timeout !== "number" || !Number.isSafeInteger(timeout) || timeout < 0)
  ) {
    throw invalidParams(`timeoutMs must be a non-negative integer or null, got ${show(timeout)}`);
  }
  const policy = p.redirectPolicy ?? "follow";
  if (policy !== "follow" && policy !== "stop") {
    throw invalidParams(`redirectPolicy must be "follow" or "stop", got ${show(policy)}`);
  }
  return {
    method,
    url,
    headers: checkHeaders(p.headers, env),
    body,
    timeoutMs: timeout as number | undefined,
    follow: policy === "follow",
    requestId,
    stream,
  };
}
