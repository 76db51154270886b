/**
 * The proxy an `http/request` goes through, from the server's environment
 * as curl reads it: `http_proxy`/`HTTP_PROXY` for `http://` URLs,
 * `https_proxy`/`HTTPS_PROXY` for `https://` ones, `all_proxy`/`ALL_PROXY`
 * for either, and `no_proxy`/`NO_PROXY` (a comma list of host names,
 * domain suffixes, addresses, or `*`) for the hosts to reach directly.
 * Plain requests name the whole URL to the proxy; TLS goes through a
 * `CONNECT` tunnel. Only `http://` proxies are supported (a `socks` one is
 * ignored, and the request goes direct).
 *
 * @module
 */
import { inCidr } from "../util/cidr.ts";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import process from "node:process";

type Env = Record<string, string | undefined>;

const first = (env: Env, names: string[]): string | undefined =>
  names.map((n) => env[n]).find((v) => v !== undefined && v !== "");

/**
 * Whether `host` (and `port`) is in a `no_proxy` list.
 *
 * @example
 * ```ts
 * import { bypassesProxy } from "./http_proxy.ts";
 * bypassesProxy("api.example.com", "443", ".example.com,localhost"); // true
 * bypassesProxy("example.org", "80", "example.com"); // false
 * bypassesProxy("10.1.2.3", "80", "10.0.0.0/8"); // true
 * ```
 */
export function bypassesProxy(host: string, port: string, list: string | undefined): boolean {
  if (!list) return false;
  const name = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return list.split(/[\s,]+/).filter((e) => e !== "").some((entry) => {
    if (entry === "*") return true;
    // An address block (`10.0.0.0/8`, `fc00::/7`) matches addresses in it.
    if (entry.includes("/")) return inCidr(name, entry.toLowerCase());
    let [pattern, wantPort] = [entry.toLowerCase(), ""];
    const m = /^(.*?):(\d+)$/.exec(pattern);
    if (m && !pattern.includes("]") && pattern.split(":").length === 2) [, pattern, wantPort] = m;
    if (wantPort && wantPort !== port) return false;
    pattern = pattern.replace(/^\[(.*)\]$/, "$1").replace(/^\*?\./, ".");
    return pattern.startsWith(".")
      ? name.endsWith(pattern) || name === pattern.slice(1)
      : name === pattern || name.endsWith(`.${pattern}`);
  });
}

/** The proxy for `target`, or undefined to go direct. */
export function proxyFor(target: URL, env: Env = process.env): URL | undefined {
  const secure = target.protocol === "https:";
  const raw = first(
    env,
    secure
      ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
      : ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"],
  );
  if (!raw) return undefined;
  const port = target.port || (secure ? "443" : "80");
  if (bypassesProxy(target.hostname, port, first(env, ["no_proxy", "NO_PROXY"]))) return undefined;
  try {
    const proxy = new URL(raw.includes("://") ? raw : `http://${raw}`);
    return proxy.protocol === "http:" ? proxy : undefined;
  } catch {
    return undefined;
  }
}

/** `Proxy-Authorization` for a proxy URL with credentials. */
export function proxyAuthorization(proxy: URL): Record<string, string> {
  if (!proxy.username && !proxy.password) return {};
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { "proxy-authorization": `Basic ${btoa(credentials)}` };
}

/** An agent that reaches `target` over TLS through a `CONNECT` tunnel of `proxy`. */
export function tunnelAgent(proxy: URL, target: URL): https.Agent {
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(target.port || 443);
  const agent = new https.Agent({ keepAlive: false });
  (agent as unknown as {
    createConnection: (o: unknown, cb: (err: Error | null, s?: Duplex) => void) => void;
  }).createConnection = (_options, callback) => {
    const authority = `${target.hostname}:${port}`;
    const connect = http.request({
      host: proxy.hostname,
      port: Number(proxy.port || 80),
      method: "CONNECT",
      path: authority,
      headers: { host: authority, ...proxyAuthorization(proxy) },
    });
    connect.once("connect", (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        callback(
          new Error(`the proxy ${proxy.host} answered ${res.statusCode} to CONNECT ${authority}`),
        );
        return;
      }
      try {
        // The certificate is checked against `host`; SNI may not name an address.
        callback(null, tls.connect({ socket, host, ...(isIP(host) ? {} : { servername: host }) }));
      } catch (err) {
        socket.destroy();
        callback(err as Error);
      }
    });
    connect.once("error", (err) => callback(err));
    connect.end();
  };
  return agent;
}
