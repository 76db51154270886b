/**
 * Loopback HTTP servers for the `http/request` tests, run in the test's own
 * process: an origin whose paths echo, redirect, gzip, hold a body until
 * the test releases it, or never answer; and a forwarding proxy that
 * records what it was asked. Everything a test waits on is an event, never
 * a delay.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { Buffer } from "node:buffer";
import zlib from "node:zlib";

/** What the origin saw of one request. */
export interface Seen {
  method: string;
  url: string;
  /** Raw header names and values, in order. */
  headers: [string, string][];
  body: string;
}

/** The deterministic bytes of `/big?n=N`. */
export function bigBody(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7 + (i >> 10)) & 255;
  return out;
}

/** An environment without any proxy setting (the test machine's own are not wanted). */
export const NO_PROXY_ENV: Record<string, string> = Object.fromEntries(
  ["http_proxy", "https_proxy", "all_proxy", "no_proxy"].flatMap((n) => [
    [n, ""],
    [n.toUpperCase(), ""],
  ]),
);

/** Start `server` on a loopback port; resolves with the port. */
function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * The origin. Paths: `/echo` (the request as JSON, with two `set-cookie`
 * headers), `/redirect?code=C&to=URL`, `/loop`, `/gzip`, `/big?n=N`,
 * `/held/<id>` (writes `first;`, then `second` and the end once
 * {@linkcode release}d), `/hang` (a head and `partial`, never the end),
 * `/nohead` (never answers), `/cut` (promises 100 bytes, sends 5, closes).
 */
export class Origin {
  readonly seen: Seen[] = [];
  readonly server: http.Server;
  port = 0;
  #held = new Map<string, http.ServerResponse>();
  #heldWaiters = new Map<string, () => void>();
  #open = new Set<net.Socket>();

  constructor() {
    this.server = http.createServer((req, res) => this.#handle(req, res));
    this.server.on("connection", (socket) => {
      this.#open.add(socket);
      socket.once("close", () => this.#open.delete(socket));
    });
  }

  static async start(): Promise<Origin> {
    const origin = new Origin();
    origin.port = await listen(origin.server);
    return origin;
  }

  /** `http://127.0.0.1:<port><path>`. */
  url(path: string, host = "127.0.0.1"): string {
    return `http://${host}:${this.port}${path}`;
  }

  /** Resolves once `/held/<id>` has been asked for and its first part sent. */
  heldOpen(id: string): Promise<void> {
    if (this.#held.has(id)) return Promise.resolve();
    return new Promise((resolve) => this.#heldWaiters.set(id, resolve));
  }

  /** Send the rest of `/held/<id>`. */
  release(id: string): void {
    const res = this.#held.get(id);
    if (!res) throw new Error(`/held/${id} is not open`);
    this.#held.delete(id);
    res.end("second");
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
      }
      const seen = {
        method: req.method!,
        url: req.url!,
        headers,
        body: Buffer.concat(chunks).toString(),
      };
      this.seen.push(seen);
      this.#answer(new URL(req.url!, "http://origin"), seen, res);
    });
  }

  #answer(u: URL, seen: Seen, res: http.ServerResponse): void {
    const held = /^\/held\/(.+)$/.exec(u.pathname);
    if (held) {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first;");
      this.#held.set(held[1], res);
      this.#heldWaiters.get(held[1])?.();
      return;
    }
    switch (u.pathname) {
      case "/echo":
        res.setHeader("set-cookie", ["a=1", "b=2"]);
        res.setHeader("X-Echo", "yes");
        res.end(JSON.stringify(seen));
        return;
      case "/redirect":
        res.writeHead(Number(u.searchParams.get("code")), { location: u.searchParams.get("to")! });
        res.end("redirecting");
        return;
      case "/loop":
        res.writeHead(302, { location: "/loop" });
        res.end();
        return;
      case "/gzip":
        res.writeHead(200, { "content-encoding": "gzip", "content-type": "text/plain" });
        res.end(zlib.gzipSync("hello, gzip"));
        return;
      case "/big": {
        const body = bigBody(Number(u.searchParams.get("n")));
        res.writeHead(200, { "content-length": String(body.byteLength) });
        res.end(body);
        return;
      }
      case "/hang":
        res.writeHead(200);
        res.write("partial");
        return;
      case "/nohead":
        return;
      case "/cut":
        res.writeHead(200, { "content-length": "100" });
        res.write("short", () => res.destroy());
        return;
    }
    res.writeHead(404);
    res.end("not found");
  }

  /** Stop, closing whatever is still open (held and hanging responses). */
  async close(): Promise<void> {
    for (const socket of this.#open) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** What the proxy was asked. */
export interface ProxyRequest {
  /** `GET`, …, or `CONNECT`. */
  method: string;
  /** The whole URL of a plain request, `host:port` of a CONNECT. */
  target: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * A forwarding proxy: plain requests are passed on to their origin with
 * `x-proxied: yes` added to the answer; a CONNECT is answered with
 * `connectStatus` and, when that is 200, tunnelled to its target.
 */
export class ForwardProxy {
  readonly asked: ProxyRequest[] = [];
  readonly server: http.Server;
  port = 0;
  connectStatus = 200;
  #open = new Set<net.Socket>();

  constructor() {
    this.server = http.createServer((req, res) => {
      this.asked.push({ method: req.method!, target: req.url!, headers: req.headers });
      const u = new URL(req.url!);
      const upstream = http.request({
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: req.method,
        headers: req.headers,
      }, (answer) => {
        res.writeHead(answer.statusCode!, { ...answer.headers, "x-proxied": "yes" });
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    this.server.on("connect", (req: http.IncomingMessage, socket: net.Socket) => {
      this.asked.push({ method: "CONNECT", target: req.url!, headers: req.headers });
      this.#open.add(socket);
      if (this.connectStatus !== 200) {
        socket.end(`HTTP/1.1 ${this.connectStatus} Refused\r\ncontent-length: 0\r\n\r\n`);
        return;
      }
      const [host, port] = req.url!.split(":");
      const tunnel = net.connect(Number(port), host, () => {
        socket.write("HTTP/1.1 200 Connection established\r\n\r\n");
        tunnel.pipe(socket);
        socket.pipe(tunnel);
      });
      tunnel.on("error", () => socket.destroy());
      socket.on("error", () => tunnel.destroy());
    });
    this.server.on("connection", (socket) => {
      this.#open.add(socket);
      socket.once("close", () => this.#open.delete(socket));
    });
  }

  static async start(): Promise<ForwardProxy> {
    const proxy = new ForwardProxy();
    proxy.port = await listen(proxy.server);
    return proxy;
  }

  async close(): Promise<void> {
    for (const socket of this.#open) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Run `fn` against a fresh {@linkcode Origin}, closed afterwards. */
export async function withOrigin(fn: (origin: Origin) => Promise<void>): Promise<void> {
  const origin = await Origin.start();
  try {
    await fn(origin);
  } finally {
    await origin.close();
  }
}
