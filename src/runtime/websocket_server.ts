/**
 * An HTTP listener that upgrades chosen requests to websockets: `Deno.serve`
 * and `Deno.upgradeWebSocket` under Deno, `node:http` and the `ws` package
 * under Node. Policy (who may connect) is the caller's: every request is
 * shown to `onRequest`, which answers it or lets it upgrade.
 *
 * @module
 */
import type { Buffer } from "node:buffer";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocketServer } from "ws";
import type { WebSocketLike } from "./websocket_types.ts";
import { isDeno } from "./runtime.ts";
import { lendToWs } from "./ws_bufferutil.ts";

/** What a listener shows `onRequest` of an incoming HTTP request. */
export interface HttpRequestHead {
  /** `GET`, `POST`, ... */
  method: string;
  /** The path without the query, e.g. `/readyz`. */
  path: string;
  /** A header's value (repeated headers joined with `, `), or null. */
  header(name: string): string | null;
  /** True for `Upgrade: websocket` requests. */
  wantsWebSocket: boolean;
  /** The peer's address, for logs. */
  remoteAddress: string;
}

/** `onRequest`'s answer: respond with a status, or upgrade to a websocket. */
export type RequestVerdict =
  | { kind: "respond"; status: number; body: string; headers?: Record<string, string> }
  | {
    kind: "upgrade";
    /** Called with the socket once it is open. */
    onOpen(socket: WebSocketLike): void;
    /** Called instead of `onOpen` when the handshake fails. */
    onAbort(): void;
  };

/** Options of {@linkcode listenWebSocket}. */
export interface WebSocketListenOptions {
  /** Address or name to bind (`127.0.0.1`, `::1`, `localhost`, `0.0.0.0`). */
  hostname: string;
  /** Port; 0 picks a free one. */
  port: number;
  /**
   * Frames above this size close the socket (code 1009) instead of being
   * delivered. Deno caps frames at its own limit (64 MiB) regardless.
   */
  maxPayloadBytes: number;
  /** Ping interval; a peer that misses a pong is disconnected. 0 disables. */
  heartbeatMs: number;
  /** Decide what happens to a request. */
  onRequest(head: HttpRequestHead): RequestVerdict;
  /** Report a listener-level error (for logs). */
  onError?(message: string): void;
}

/** A bound listener. */
export interface WebSocketListener {
  /** The bound address (an IP address, even when a name was given). */
  readonly hostname: string;
  /** The bound port. */
  readonly port: number;
  /**
   * Stop listening and release the port. Upgraded websockets are the
   * caller's to close: Deno closes them itself (code 1001), Node leaves them
   * open.
   */
  close(): Promise<void>;
}

/** Thrown when the address cannot be bound. */
export class ListenError extends Error {
  /**
   * Name the address and the reason.
   *
   * @param address what was bound
   * @param cause why it failed
   */
  constructor(address: string, cause: unknown) {
    super(
      `cannot listen on ${address}: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = "ListenError";
  }
}

/**
 * Bind `hostname:port` and serve HTTP, upgrading the requests `onRequest`
 * allows.
 *
 * @example
 * ```ts
 * import { listenWebSocket } from "./websocket_server.ts";
 * const listener = await listenWebSocket({
 *   hostname: "127.0.0.1",
 *   port: 0,
 *   maxPayloadBytes: 1 << 20,
 *   heartbeatMs: 30_000,
 *   onRequest: () => ({ kind: "respond", status: 404, body: "not found\n" }),
 * });
 * console.log(listener.port);
 * await listener.close();
 * ```
 * @throws {ListenError} when the address is in use or cannot be bound
 */
export function listenWebSocket(opts: WebSocketListenOptions): Promise<WebSocketListener> {
  return isDeno ? listenDeno(opts) : listenNode(opts);
}

// The Deno APIs used here, declared so the tree also compiles without Deno's types.
interface DenoServeApi {
  serve(
    options: {
      hostname: string;
      port: number;
      onListen(addr: unknown): void;
      onError(err: unknown): Response;
    },
    handler: (req: Request, info: { remoteAddr: { hostname: string } }) => Response,
  ): { addr: { hostname: string; port: number }; shutdown(): Promise<void> };
  upgradeWebSocket(
    req: Request,
    options: { idleTimeout: number },
  ): { socket: WebSocketLike; response: Response };
}

function listenDeno(opts: WebSocketListenOptions): Promise<WebSocketListener> {
  const deno = (globalThis as unknown as { Deno: DenoServeApi }).Deno;
  // Deno's idle timeout is in whole seconds; 0 disables it.
  const idleTimeout = opts.heartbeatMs > 0 ? Math.max(1, Math.ceil(opts.heartbeatMs / 1000)) : 0;
  let server;
  try {
    server = deno.serve({
      hostname: opts.hostname,
      port: opts.port,
      onListen() {},
      onError(err) {
        opts.onError?.(`request failed: ${err instanceof Error ? err.message : String(err)}`);
        return new Response("internal error\n", { status: 500 });
      },
    }, (req, info) => {
      const head: HttpRequestHead = {
        method: req.method,
        path: new URL(req.url).pathname,
        header: (name) => req.headers.get(name),
        wantsWebSocket: (req.headers.get("upgrade") ?? "").toLowerCase() === "websocket",
        remoteAddress: info.remoteAddr.hostname,
      };
      const verdict = opts.onRequest(head);
      if (verdict.kind === "respond") {
        return new Response(verdict.body, {
          status: verdict.status,
          headers: { "content-type": "text/plain; charset=utf-8", ...verdict.headers },
        });
      }
      let upgraded;
      try {
        upgraded = deno.upgradeWebSocket(req, { idleTimeout });
      } catch {
        verdict.onAbort();
        return new Response("bad websocket handshake\n", { status: 400 });
      }
      const { socket, response } = upgraded;
      let opened = false;
      socket.addEventListener("open", () => {
        opened = true;
        verdict.onOpen(socket);
      });
      socket.addEventListener("close", () => {
        if (!opened) verdict.onAbort();
      });
      return response;
    });
  } catch (err) {
    return Promise.reject(new ListenError(`${opts.hostname}:${opts.port}`, err));
  }
  const { hostname, port } = server.addr;
  let closed: Promise<void> | undefined;
  return Promise.resolve({
    hostname,
    port,
    close: () => closed ??= server.shutdown(),
  });
}

async function listenNode(opts: WebSocketListenOptions): Promise<WebSocketListener> {
  const http = await import("node:http");
  lendToWs();
  const { WebSocketServer } = await import("ws");
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    maxPayload: opts.maxPayloadBytes,
    // Compression costs CPU per frame and invites compression-ratio attacks.
    perMessageDeflate: false,
  });
  const server = http.createServer();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => answerNode(opts, req, res));
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgradeNode(opts, wss, http.STATUS_CODES, req, socket, head);
  });
  server.on("clientError", (_err: Error, socket: Duplex) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  await bindNode(server, opts);
  server.on("error", (err: Error) => opts.onError?.(`listener error: ${err.message}`));
  const address = server.address();
  if (address === null || typeof address === "string") {
    throw new ListenError(`${opts.hostname}:${opts.port}`, "no TCP address after listen");
  }
  let closed: Promise<void> | undefined;
  return {
    hostname: address.address,
    port: address.port,
    close: () =>
      closed ??= new Promise<void>((resolve) => {
        // close()'s callback would wait for every upgraded socket too; the
        // port itself is released right away.
        server.close();
        server.closeIdleConnections();
        wss.close();
        setImmediate(resolve);
      }),
  };
}

/** A Node request as `onRequest` sees it. */
function nodeRequestHead(req: IncomingMessage, wantsWebSocket: boolean): HttpRequestHead {
  return {
    method: req.method ?? "GET",
    path: (req.url ?? "/").replace(/[?#].*$/, ""),
    header: (name) => {
      const v = req.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
    },
    wantsWebSocket,
    remoteAddress: req.socket.remoteAddress ?? "",
  };
}

/** Answer a plain (not upgrade) HTTP request as `onRequest` says. */
function answerNode(opts: WebSocketListenOptions, req: IncomingMessage, res: ServerResponse): void {
  const verdict = opts.onRequest(nodeRequestHead(req, false));
  if (verdict.kind === "upgrade") {
    // Only upgrade requests are upgraded; a policy saying otherwise is a bug.
    verdict.onAbort();
    res.writeHead(400, { "content-type": "text/plain; charset=utf-8" }).end(
      "not a websocket request\n",
    );
    return;
  }
  res.writeHead(verdict.status, {
    "content-type": "text/plain; charset=utf-8",
    ...verdict.headers,
  }).end(verdict.body);
}

/** Refuse an upgrade request or hand it to `ws`, as `onRequest` says. */
function upgradeNode(
  opts: WebSocketListenOptions,
  wss: WebSocketServer,
  statusTexts: Record<number, string | undefined>,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  socket.on("error", () => socket.destroy());
  const wantsWebSocket = (req.headers.upgrade ?? "").toLowerCase() === "websocket";
  const verdict = opts.onRequest(nodeRequestHead(req, wantsWebSocket));
  if (verdict.kind === "respond") {
    rejectUpgrade(socket, verdict.status, verdict.body, verdict.headers, statusTexts);
    return;
  }
  let opened = false;
  // ws answers a malformed handshake itself and never calls back.
  socket.once("close", () => {
    if (!opened) verdict.onAbort();
  });
  wss.handleUpgrade(req, socket, head, (ws) => {
    opened = true;
    if (opts.heartbeatMs > 0) keepAlive(ws, opts.heartbeatMs);
    verdict.onOpen(ws as unknown as WebSocketLike);
  });
}

/** Listen on the address, rejecting with {@linkcode ListenError} if it cannot be bound. */
function bindNode(server: Server, opts: WebSocketListenOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(new ListenError(`${opts.hostname}:${opts.port}`, err));
    server.once("error", onError);
    server.listen({ host: opts.hostname, port: opts.port }, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

interface PingingSocket {
  ping(): void;
  terminate(): void;
  on(event: "pong" | "close", listener: () => void): void;
}

// Mirrors Deno's idleTimeout: a peer that does not answer a ping before the
// next one is due is gone, and so are its processes.
function keepAlive(ws: PingingSocket, intervalMs: number): void {
  let answered = true;
  ws.on("pong", () => answered = true);
  const timer = setInterval(() => {
    if (!answered) {
      ws.terminate();
      return;
    }
    answered = false;
    try {
      ws.ping();
    } catch {
      ws.terminate();
    }
  }, intervalMs);
  ws.on("close", () => clearInterval(timer));
}

function rejectUpgrade(
  socket: Duplex,
  status: number,
  body: string,
  headers: Record<string, string> | undefined,
  statusTexts: Record<number, string | undefined>,
): void {
  const bytes = new TextEncoder().encode(body);
  const lines = [
    `HTTP/1.1 ${status} ${statusTexts[status] ?? ""}`,
    "connection: close",
    "content-type: text/plain; charset=utf-8",
    `content-length: ${bytes.byteLength}`,
    ...Object.entries(headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    "",
    "",
  ];
  socket.end(lines.join("\r\n") + body);
}
