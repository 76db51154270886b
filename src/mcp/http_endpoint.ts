/**
 * MCP over Streamable HTTP: one endpoint path (`/mcp`), a bearer token on
 * every request, browser origins refused unless allowed, and on a loopback
 * address a `Host` that names loopback (a DNS-rebinding page cannot reach
 * it). Each client's `initialize` opens an MCP session (the SDK's stateful
 * transport, so a cancellation reaches the call it cancels); all sessions
 * share the {@linkcode ExecMcp} and so its commands.
 *
 * @module
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { type HttpListener, listenHttp } from "../runtime/http_server.ts";
import {
  BearerToken,
  generateToken,
  isLoopbackHost,
  OriginPolicy,
  validateToken,
  WebSocketConfigError,
} from "../transport/websocket_auth.ts";
import { within } from "../util/deadline.ts";
import type { ExecMcp } from "./exec_mcp.ts";
import { connectionServer } from "./sdk_server.ts";

/** Options of {@linkcode serveMcpHttp}. */
export interface McpHttpOptions {
  /** Address to bind (default `127.0.0.1`). */
  hostname?: string;
  /** Port (default 0: a free one). */
  port?: number;
  /** The endpoint's path (default `/mcp`). */
  path?: string;
  /** The bearer token; generated when absent (loopback only) unless `noAuth`. */
  token?: string;
  /** Accept requests without a token (trusted setups only). */
  noAuth?: boolean;
  /** Browser origins allowed. */
  allowOrigins?: string[];
  /** MCP sessions kept at once; past it the least recently used is closed (default 64). */
  maxSessions?: number;
  /** Told about failed requests. */
  onProblem?: (message: string) => void;
}

/** A listening endpoint. */
export interface McpHttpHandle {
  /** The endpoint's URL, e.g. `http://127.0.0.1:8123/mcp`. */
  readonly url: string;
  /** The token clients send, or undefined with `noAuth`. */
  readonly token: string | undefined;
  /** Whether the token was generated (and must be shown to the operator). */
  readonly tokenGenerated: boolean;
  /** Close every session and stop listening. */
  close(): Promise<void>;
}

interface Settings {
  path: string;
  bearer: BearerToken | undefined;
  origins: OriginPolicy;
  loopbackOnly: boolean;
  maxSessions: number;
}

const text = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body + "\n", {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  });

/** The hostname of a `Host` header (`[::1]:80` → `::1`), lowercased. */
function hostOf(host: string): string {
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(host) ?? /^([^:]+)(?::\d+)?$/.exec(host);
  return (m ? m[1] : host).toLowerCase();
}

/**
 * Serve `mcp` over Streamable HTTP.
 *
 * @example
 * ```ts
 * import { Environment } from "../client/environment.ts";
 * import { ExecMcp } from "./exec_mcp.ts";
 * import { serveMcpHttp } from "./http_endpoint.ts";
 * const http = await serveMcpHttp(new ExecMcp(Environment.local()), { port: 0 });
 * console.error(`${http.url} token ${http.token}`);
 * await http.close();
 * ```
 * @throws {WebSocketConfigError} for an unsafe setting (a generated token off loopback)
 */
export async function serveMcpHttp(
  mcp: ExecMcp,
  options: McpHttpOptions = {},
): Promise<McpHttpHandle> {
  const hostname = options.hostname ?? "127.0.0.1";
  const { token, generated } = chooseToken(hostname, options);
  const settings: Settings = {
    path: options.path ?? "/mcp",
    bearer: token === undefined ? undefined : new BearerToken(token),
    origins: new OriginPolicy(options.allowOrigins ?? []),
    loopbackOnly: isLoopbackHost(hostname),
    maxSessions: options.maxSessions ?? 64,
  };
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const listener: HttpListener = await listenHttp({
    hostname,
    port: options.port ?? 0,
    handler: (req) => handle(mcp, settings, sessions, req),
    onError: options.onProblem,
  });
  const shownHost = listener.hostname.includes(":") ? `[${listener.hostname}]` : listener.hostname;
  return {
    url: `http://${shownHost}:${listener.port}${settings.path}`,
    token,
    tokenGenerated: generated,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => {})));
      // Bounded: a client that keeps a response open must not hold the exit.
      await within(listener.close(), 2_000);
    },
  };
}

function chooseToken(
  hostname: string,
  options: McpHttpOptions,
): { token: string | undefined; generated: boolean } {
  if (options.noAuth && options.token !== undefined) {
    throw new WebSocketConfigError("a token and no-auth exclude each other: choose one");
  }
  if (options.noAuth) return { token: undefined, generated: false };
  if (options.token !== undefined) return { token: validateToken(options.token), generated: false };
  if (!isLoopbackHost(hostname)) {
    throw new WebSocketConfigError(
      `refusing to listen on ${hostname}, which is not a loopback address, with a generated ` +
        `token: give a token file (--token-file), or --no-auth on a trusted network`,
    );
  }
  return { token: generateToken(), generated: true };
}

/** Judge a request, then hand it to its session's transport. */
async function handle(
  mcp: ExecMcp,
  settings: Settings,
  sessions: Map<string, WebStandardStreamableHTTPServerTransport>,
  req: Request,
): Promise<Response> {
  const url = new URL(req.url);
  if (url.pathname === "/readyz" && req.method === "GET") return text(200, "ok");
  if (url.pathname !== settings.path) {
    return text(404, `not found: the endpoint is ${settings.path}`);
  }
  const host = req.headers.get("host") ?? "";
  if (settings.loopbackOnly && !isLoopbackHost(hostOf(host))) {
    return text(403, `Host ${JSON.stringify(host)} is not this loopback listener`);
  }
  if (!settings.origins.allows(req.headers.get("origin"))) {
    return text(403, `origin ${JSON.stringify(req.headers.get("origin"))} is not allowed`);
  }
  if (settings.bearer && !settings.bearer.matches(req.headers.get("authorization"))) {
    return text(401, "missing or wrong bearer token", { "www-authenticate": "Bearer" });
  }
  const id = req.headers.get("mcp-session-id");
  if (id !== null) {
    const transport = sessions.get(id);
    if (!transport) return text(404, `no MCP session ${JSON.stringify(id)}: initialize again`);
    // Most recently used last, so the first is the one to close when full.
    sessions.delete(id);
    sessions.set(id, transport);
    return await untilGone(req, transport.handleRequest(req));
  }
  if (req.method !== "POST") return text(400, "no Mcp-Session-Id: POST initialize first");
  return await openSession(mcp, settings, sessions, req);
}

/**
 * `response`, or an empty one once the client has hung up: the SDK never
 * answers a request the client cancelled, and a handler left waiting
 * would hold the listener's shutdown forever.
 */
function untilGone(req: Request, response: Promise<Response>): Promise<Response> {
  if (req.signal.aborted) return Promise.resolve(new Response(null, { status: 499 }));
  return new Promise((resolve, reject) => {
    const gone = () => resolve(new Response(null, { status: 499 }));
    req.signal.addEventListener("abort", gone, { once: true });
    response.then(resolve, reject).finally(() => req.signal.removeEventListener("abort", gone));
  });
}

/** A request without a session: the SDK answers it, opening one for an `initialize`. */
async function openSession(
  mcp: ExecMcp,
  settings: Settings,
  sessions: Map<string, WebStandardStreamableHTTPServerTransport>,
  req: Request,
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    enableJsonResponse: true,
    onsessioninitialized: (sid) => {
      sessions.set(sid, transport);
      while (sessions.size > settings.maxSessions) {
        const [oldest, t] = sessions.entries().next().value!;
        sessions.delete(oldest);
        t.close().catch(() => {});
      }
    },
    onsessionclosed: (sid) => {
      sessions.delete(sid);
    },
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };
  await connectionServer(mcp).connect(transport);
  return await transport.handleRequest(req);
}
