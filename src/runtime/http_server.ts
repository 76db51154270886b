/**
 * A plain HTTP listener with web-standard `Request`/`Response` handlers:
 * `Deno.serve` under Deno, `node:http` under Node (bodies, including
 * streamed server-sent events, are piped both ways; a client that hangs up
 * aborts the request's signal, as Deno does).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { isDeno } from "./runtime.ts";
import { ListenError } from "./websocket_server.ts";

/** A request handler; `remoteAddress` is the peer's IP address. */
export type HttpHandler = (req: Request, remoteAddress: string) => Response | Promise<Response>;

/** Options of {@linkcode listenHttp}. */
export interface HttpListenOptions {
  /** Address or name to bind. */
  hostname: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Answers every request. */
  handler: HttpHandler;
  /** Report a handler that threw (it is answered 500). */
  onError?(message: string): void;
}

/** A bound listener. */
export interface HttpListener {
  /** The bound address. */
  readonly hostname: string;
  /** The bound port. */
  readonly port: number;
  /** Stop listening; open responses are ended. */
  close(): Promise<void>;
}

/**
 * Listen for HTTP requests.
 *
 * @example
 * ```ts
 * import { listenHttp } from "./http_server.ts";
 * const l = await listenHttp({ hostname: "127.0.0.1", port: 0, handler: () => new Response("hi") });
 * await l.close();
 * ```
 * @throws {ListenError} when the address cannot be bound
 */
export function listenHttp(opts: HttpListenOptions): Promise<HttpListener> {
  return isDeno ? listenDeno(opts) : listenNode(opts);
}

interface DenoHttpApi {
  serve(
    options: {
      hostname: string;
      port: number;
      onListen(addr: unknown): void;
      onError(err: unknown): Response;
    },
    handler: (
      req: Request,
      info: { remoteAddr: { hostname: string } },
    ) => Response | Promise<Response>,
  ): { addr: { hostname: string; port: number }; shutdown(): Promise<void> };
}

function failed(opts: HttpListenOptions, err: unknown): Response {
  opts.onError?.(`request failed: ${err instanceof Error ? err.message : String(err)}`);
  return new Response("internal error\n", { status: 500 });
}

function listenDeno(opts: HttpListenOptions): Promise<HttpListener> {
  const deno = (globalThis as unknown as { Deno: DenoHttpApi }).Deno;
  let server;
  try {
    server = deno.serve(
      { hostname: opts.hostname, port: opts.port, onListen() {}, onError: (e) => failed(opts, e) },
      (req, info) => opts.handler(req, info.remoteAddr.hostname),
    );
  } catch (err) {
    return Promise.reject(new ListenError(`${opts.hostname}:${opts.port}`, err));
  }
  let closed: Promise<void> | undefined;
  return Promise.resolve({
    hostname: server.addr.hostname,
    port: server.addr.port,
    close: () => closed ??= server.shutdown(),
  });
}

async function listenNode(opts: HttpListenOptions): Promise<HttpListener> {
  const http = await import("node:http");
  const open = new Set<ServerResponse>();
  const server = http.createServer((req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    serveNode(opts, req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500).end("internal error\n");
      else res.destroy();
      opts.onError?.(`request failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) => reject(new ListenError(`${opts.hostname}:${opts.port}`, err)));
    server.listen(opts.port, opts.hostname, () => resolve());
  });
  const addr = server.address() as { address: string; port: number };
  let closed: Promise<void> | undefined;
  return {
    hostname: addr.address,
    port: addr.port,
    close: () =>
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const res of open) res.destroy();
      }),
  };
}

async function serveNode(opts: HttpListenOptions, req: IncomingMessage, res: ServerResponse) {
  const aborted = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) aborted.abort();
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const host = req.headers.host ?? `${opts.hostname}`;
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const request = new Request(`http://${host}${req.url ?? "/"}`, {
    method: req.method,
    headers,
    signal: aborted.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
  let response: Response;
  try {
    response = await opts.handler(request, req.socket.remoteAddress ?? "");
  } catch (err) {
    response = failed(opts, err);
  }
  const out: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    out[name] = name === "set-cookie" ? response.headers.getSetCookie() : value;
  });
  res.writeHead(response.status, out);
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  aborted.signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // Wait for the socket when it is full, so a slow reader throttles the stream.
    if (!res.write(value)) {
      await new Promise((r) => {
        res.once("drain", r);
        res.once("close", r);
      });
    }
    if (aborted.signal.aborted) return;
  }
  res.end();
}
