/**
 * Making an `http/request` from this host (see ../protocol/http_request.ts)
 * with `node:http` and `node:https`, under Deno and Node alike: redirects
 * followed as upstream follows them (at most 10; 301, 302 and 303 become a
 * GET without body, 307 and 308 keep both; credentials are not carried to
 * another origin), gzip bodies decoded, one deadline for the whole
 * exchange, proxies from the environment (./http_proxy.ts). The body is a
 * stream the caller reads at its own pace, so a slow client slows the
 * transfer down instead of filling memory.
 *
 * @module
 */
import type { IncomingMessage } from "node:http";
import http from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import zlib from "node:zlib";
import { MAX_REDIRECTS } from "../protocol/http_request.ts";
import type { CheckedHttpRequest } from "../protocol/http_request.ts";
import { proxyAuthorization, proxyFor, tunnelAgent } from "./http_proxy.ts";

/** Why an exchange failed: before the head (`send`) or while reading the body (`body`). */
export class HttpExchangeError extends Error {
  /** Where it failed. */
  readonly stage: "send" | "body";

  /** @param stage where it failed; @param message why */
  constructor(stage: "send" | "body", message: string) {
    super(message);
    this.name = "HttpExchangeError";
    this.stage = stage;
  }
}

/**
 * Why a body stopped, in words: the runtimes' own errors for a connection
 * that ended early say only `aborted`.
 */
export function bodyErrorMessage(err: unknown): string {
  if (err instanceof HttpExchangeError) return err.message;
  const message = err instanceof Error ? err.message : String(err);
  if (message === "aborted") return "the connection closed before the body was complete";
  return message;
}

/** A response whose head has arrived. */
export interface HttpExchange {
  /** The status code of the last response. */
  status: number;
  /** Its headers, names in lower case, grouped by name in order of first appearance. */
  headers: { name: string; value: string }[];
  /** The body, decoded; it errors with an {@linkcode HttpExchangeError} of stage `body`. */
  body: Readable;
  /** Stop: the connection is closed and the body ends with an error. */
  abort(reason: string): void;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that must not follow a redirect to another origin. */
const CREDENTIALS = new Set(["authorization", "cookie", "proxy-authorization"]);

/**
 * Agents that open a connection per request: under Deno (2.9) a request on
 * a kept-alive socket ignores its abort signal and `destroy()`, so that a
 * deadline never fired on the second request to a host (and the socket
 * leaked).
 */
const HTTP_AGENT = new http.Agent({ keepAlive: false });
const HTTPS_AGENT = new https.Agent({ keepAlive: false });

/** The headers of `res`, grouped by name as upstream's header map orders them. */
function responseHeaders(
  res: IncomingMessage,
  decoded: boolean,
): { name: string; value: string }[] {
  const groups = new Map<string, string[]>();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (decoded && (name === "content-encoding" || name === "content-length")) continue;
    const list = groups.get(name) ?? [];
    list.push(raw[i + 1]);
    groups.set(name, list);
  }
  return [...groups].flatMap(([name, values]) => values.map((value) => ({ name, value })));
}

interface Hop {
  method: string;
  url: URL;
  headers: [string, string][];
  body: Uint8Array;
}

/** Send one request; resolves with the response head. */
function sendOnce(hop: Hop, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: [string, string][] = [...hop.headers];
    const has = (name: string) => headers.some(([n]) => n === name);
    if (!has("accept")) headers.push(["accept", "*/*"]);
    if (!has("accept-encoding")) headers.push(["accept-encoding", "gzip"]);
    // Set here, in upstream's place among the headers (the runtimes differ in where they put theirs).
    if (!has("host")) headers.push(["host", hop.url.host]);
    if (hop.body.byteLength > 0 && !has("content-length")) {
      headers.push(["content-length", String(hop.body.byteLength)]);
    }
    if ((hop.url.username || hop.url.password) && !has("authorization")) {
      const credentials = `${decodeURIComponent(hop.url.username)}:${
        decodeURIComponent(hop.url.password)
      }`;
      headers.push(["authorization", `Basic ${btoa(credentials)}`]);
    }
    const proxy = proxyFor(hop.url);
    const secure = hop.url.protocol === "https:";
    const direct = !proxy || secure;
    if (!direct) headers.push(...Object.entries(proxyAuthorization(proxy)));
    const req = (secure ? https : http).request({
      method: hop.method,
      host: direct ? hop.url.hostname.replace(/^\[(.*)\]$/, "$1") : proxy.hostname,
      port: direct ? (hop.url.port || (secure ? 443 : 80)) : (proxy.port || 80),
      // Through a proxy a plain request names the whole URL.
      path: direct ? `${hop.url.pathname}${hop.url.search}` : hop.url.href,
      headers: headers.flat(),
      agent: proxy && secure ? tunnelAgent(proxy, hop.url) : secure ? HTTPS_AGENT : HTTP_AGENT,
      setHost: false,
      signal,
    });
    req.once("response", resolve);
    req.once("error", (err) => reject(new HttpExchangeError("send", err.message)));
    req.end(hop.body.byteLength > 0 ? hop.body : undefined);
  });
}

/** The request to make after a redirect from `hop` to `location`. */
function redirected(hop: Hop, status: number, location: string): Hop {
  let next: URL;
  try {
    next = new URL(location, hop.url);
  } catch {
    throw new HttpExchangeError(
      "send",
      `redirect to an invalid location ${JSON.stringify(location)}`,
    );
  }
  if (next.protocol !== "http:" && next.protocol !== "https:") {
    throw new HttpExchangeError(
      "send",
      `redirect target uses unsupported URL scheme: ${next.protocol.slice(0, -1)}`,
    );
  }
  next.hash = "";
  const toGet = status <= 303 && hop.method.toUpperCase() !== "HEAD";
  const crossOrigin = next.origin !== hop.url.origin;
  const headers = hop.headers.filter(([name]) =>
    !(crossOrigin && CREDENTIALS.has(name)) &&
    !(toGet && (name === "content-type" || name === "content-length")) && name !== "referer" &&
    name !== "host"
  );
  const referer = crossOrigin ? `${hop.url.origin}/` : hop.url.href;
  headers.push(["referer", referer]);
  return {
    method: toGet ? "GET" : hop.method,
    url: next,
    headers,
    body: toGet ? new Uint8Array() : hop.body,
  };
}

/**
 * Make the request: resolves once the final response's head arrived (all
 * redirects followed when asked).
 *
 * @throws {HttpExchangeError} of stage `send` for a failed connection,
 * too many redirects, a redirect to another scheme, or the deadline
 */
export async function openExchange(request: CheckedHttpRequest): Promise<HttpExchange> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = request.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, request.timeoutMs);
  const failed = (err: unknown): never => {
    if (timer !== undefined) clearTimeout(timer);
    if (timedOut) throw new HttpExchangeError("send", `timed out after ${request.timeoutMs} ms`);
    throw err instanceof HttpExchangeError ? err : new HttpExchangeError("send", String(err));
  };
  let hop: Hop = { ...request };
  let res: IncomingMessage;
  for (let redirects = 0;; redirects++) {
    res = await sendOnce(hop, controller.signal).catch(failed);
    const location = res.headers.location;
    if (!request.follow || !REDIRECTS.has(res.statusCode ?? 0) || typeof location !== "string") {
      break;
    }
    res.resume();
    if (redirects === MAX_REDIRECTS) failed(new HttpExchangeError("send", "too many redirects"));
    try {
      hop = redirected(hop, res.statusCode!, location);
    } catch (err) {
      failed(err);
    }
  }
  const gzip = /^\s*(x-)?gzip\s*$/i.test(String(res.headers["content-encoding"] ?? ""));
  const body: Readable = gzip ? res.pipe(zlib.createGunzip()) : res;
  const end = () => timer !== undefined && clearTimeout(timer);
  const broken = (why: string) => {
    end();
    body.destroy(
      new HttpExchangeError("body", timedOut ? `timed out after ${request.timeoutMs} ms` : why),
    );
  };
  res.once("aborted", () => broken("the connection closed before the body was complete"));
  res.once("error", (err) => broken(err.message));
  if (gzip) res.once("end", () => {}).once("close", () => !res.complete && broken("truncated"));
  body.once("end", end);
  body.once("error", end);
  controller.signal.addEventListener("abort", () => broken("aborted"), { once: true });
  return {
    status: res.statusCode ?? 0,
    headers: responseHeaders(res, gzip),
    body,
    abort: (reason) => {
      res.destroy();
      broken(reason);
    },
  };
}
