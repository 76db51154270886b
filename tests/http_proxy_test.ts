/**
 * `http/request` through the proxy of the server's environment
 * (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`), with a forwarding proxy in
 * the test's process: a plain request names the whole URL to the proxy
 * with its credentials, a listed host goes direct, and TLS asks for a
 * `CONNECT` tunnel (no certificate here, so the handshake through it
 * fails, after the proxy was asked as it should be).
 */
import assert from "node:assert/strict";
import { ForwardProxy, NO_PROXY_ENV, Origin } from "./http_fixture.ts";
import { type Msg, TestServer, unb64 } from "./harness.ts";

/** Servers and a Codex-dialect session whose proxy is `proxy`, with `user:pw`. */
async function withProxy(
  fn: (s: TestServer, proxy: ForwardProxy, origin: Origin) => Promise<void>,
): Promise<void> {
  const [proxy, origin] = await Promise.all([ForwardProxy.start(), Origin.start()]);
  const url = `http://user:p%40ss@127.0.0.1:${proxy.port}`;
  const env = { ...NO_PROXY_ENV, HTTP_PROXY: url, HTTPS_PROXY: url, NO_PROXY: "localhost" };
  const s = new TestServer(["--log-level", "off"], { env });
  try {
    await s.call("initialize", { clientName: "codex-environment", resumeSessionId: null });
    s.notify("initialized", {});
    await fn(s, proxy, origin);
  } finally {
    await s.close();
    await Promise.all([proxy.close(), origin.close()]);
  }
}

let nextId = 0;
const get = (s: TestServer, url: string): Promise<Msg> =>
  s.request("http/request", { method: "GET", url, requestId: `px-${++nextId}` });

const PROXY_AUTH = `Basic ${btoa("user:p@ss")}`;

Deno.test("http/request: a plain request goes through HTTP_PROXY, naming the URL", async () => {
  await withProxy(async (s, proxy, origin) => {
    const res = await get(s, origin.url("/echo?via=proxy"));
    assert.equal(res.result?.status, 200, JSON.stringify(res));
    assert.ok(
      res.result.headers.some((h: Msg) => h.name === "x-proxied" && h.value === "yes"),
      "answered by the proxy",
    );
    assert.equal(proxy.asked.length, 1);
    const [asked] = proxy.asked;
    assert.equal(asked.method, "GET");
    assert.equal(asked.target, origin.url("/echo?via=proxy"));
    assert.equal(asked.headers["proxy-authorization"], PROXY_AUTH);
    assert.equal(asked.headers.host, `127.0.0.1:${origin.port}`);
    // What reached the origin is the request itself.
    const seen = JSON.parse(unb64(res.result.bodyBase64));
    assert.equal(seen.url, "/echo?via=proxy");
  });
});

Deno.test("http/request: a NO_PROXY host is reached directly", async () => {
  await withProxy(async (s, proxy, origin) => {
    const res = await get(s, origin.url("/echo", "localhost"));
    assert.equal(res.result?.status, 200, JSON.stringify(res));
    assert.ok(!res.result.headers.some((h: Msg) => h.name === "x-proxied"));
    assert.deepEqual(proxy.asked, []);
    assert.equal(origin.seen.length, 1);
    const headers = origin.seen[0].headers.map(([name]) => name.toLowerCase());
    assert.ok(!headers.includes("proxy-authorization"), "credentials stay with the proxy");
  });
});

Deno.test("http/request: https through the proxy asks for a CONNECT tunnel", async () => {
  await withProxy(async (s, proxy, origin) => {
    // The tunnel reaches a plain HTTP origin: the TLS handshake through it fails.
    const tunnelled = await get(s, `https://127.0.0.1:${origin.port}/echo`);
    assert.equal(tunnelled.error?.code, -32603, JSON.stringify(tunnelled));
    assert.match(tunnelled.error.message, /^http\/request failed: /);
    assert.equal(proxy.asked.length, 1);
    assert.equal(proxy.asked[0].method, "CONNECT");
    assert.equal(proxy.asked[0].target, `127.0.0.1:${origin.port}`);
    assert.equal(proxy.asked[0].headers["proxy-authorization"], PROXY_AUTH);
    proxy.connectStatus = 403;
    const refused = await get(s, `https://127.0.0.1:${origin.port}/echo`);
    assert.equal(refused.error?.code, -32603);
    assert.equal(
      refused.error.message,
      `http/request failed: the proxy 127.0.0.1:${proxy.port} answered 403 to CONNECT 127.0.0.1:${origin.port}`,
    );
  });
});
