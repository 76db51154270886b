/**
 * `http/request` in the Codex CLI's dialect, buffered, against a loopback
 * origin in the test's process: what goes on the wire and what comes
 * back, redirects, gzip, transport errors, the header checks, the server's
 * own variables in headers, and a sandbox that restricts the network.
 * Streamed bodies: http_stream_test.ts; proxies and v0: http_proxy_test.ts.
 */
import assert from "node:assert/strict";
import { NO_PROXY_ENV, Origin, type Seen, withOrigin } from "./http_fixture.ts";
import { b64, type Msg, type TestServer, unb64 } from "./harness.ts";
import { codexServer } from "./server_helpers.ts";

/** A Codex-dialect server that reaches the test origin directly. */
const httpServer = (env: Record<string, string> = {}) =>
  codexServer({ env: { ...NO_PROXY_ENV, ...env } });

let nextId = 0;
/** An `http/request` with a fresh requestId; `extra` laid over. */
function request(s: TestServer, method: string, url: string, extra: Msg = {}): Promise<Msg> {
  return s.request("http/request", { method, url, requestId: `req-${++nextId}`, ...extra });
}

/** The origin's record of the request, from the echoed body. */
const echoed = (res: Msg): Seen => JSON.parse(unb64(res.result.bodyBase64));
const headerValues = (seen: Seen, name: string) =>
  seen.headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);

Deno.test("http/request: the request as given, the answer's status, headers and body", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    const res = await request(s, "POST", origin.url("/echo?q=1"), {
      headers: [
        { name: "X-A", value: "1" },
        { name: "x-a", value: "2" },
        { name: "Content-Type", value: "text/plain" },
      ],
      bodyBase64: b64("hello"),
      timeoutMs: null,
      redirectPolicy: "follow",
      streamResponse: false,
    });
    assert.equal(res.result.status, 200, JSON.stringify(res));
    const seen = echoed(res);
    assert.equal(seen.method, "POST");
    assert.equal(seen.url, "/echo?q=1");
    assert.equal(seen.body, "hello");
    assert.deepEqual(headerValues(seen, "x-a"), ["1", "2"]);
    assert.deepEqual(headerValues(seen, "content-length"), ["5"]);
    assert.deepEqual(headerValues(seen, "host"), [`127.0.0.1:${origin.port}`]);
    // Response headers: names in lower case, a repeated one kept in order.
    const headers: { name: string; value: string }[] = res.result.headers;
    assert.ok(headers.every((h) => h.name === h.name.toLowerCase()), JSON.stringify(headers));
    assert.deepEqual(headers.filter((h) => h.name === "set-cookie").map((h) => h.value), [
      "a=1",
      "b=2",
    ]);
    assert.deepEqual(headers.find((h) => h.name === "x-echo"), { name: "x-echo", value: "yes" });
    assert.deepEqual(Object.keys(res.result).sort(), ["bodyBase64", "headers", "status"]);
    // A status that is not 2xx is an answer like any other.
    const missing = await request(s, "GET", origin.url("/nothing-here"));
    assert.equal(missing.result.status, 404);
    assert.equal(unb64(missing.result.bodyBase64), "not found");
  });
});

Deno.test("http/request: valueEnvVar is read from the server's environment", async () => {
  const name = "EXEC_SERVER_TEST_MCP_TOKEN";
  assert.equal(Deno.env.get(name), undefined, "only the server has it");
  await using s = await httpServer({ [name]: "sekrit" });
  await withOrigin(async (origin) => {
    const auth = (valueEnvVar: string) => ({
      headers: [{ name: "Authorization", value: "Bearer ", valueEnvVar }],
    });
    const res = await request(s, "GET", origin.url("/echo"), auth(name));
    assert.deepEqual(headerValues(echoed(res), "authorization"), ["Bearer sekrit"]);
    const unset = await request(s, "GET", origin.url("/echo"), auth("EXEC_SERVER_TEST_UNSET"));
    assert.equal(unset.error?.code, -32602);
    assert.equal(
      unset.error.message,
      "http/request header Authorization requires executor environment variable EXEC_SERVER_TEST_UNSET",
    );
    assert.equal(origin.seen.length, 1, "a refused request is never sent");
  });
});

Deno.test("http/request: bad params are -32602 and nothing is sent", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    const cases: [Msg, string][] = [
      [{ url: "ftp://127.0.0.1/x" }, "http/request only supports http and https URLs, got ftp"],
      [{ url: "file:///etc/passwd" }, "http/request only supports http and https URLs, got file"],
      [{ headers: [{ name: "X", value: "a\r\nInjected: 1" }] }, "header value is invalid for X"],
      [{ headers: [{ name: "X Y", value: "a" }] }, "header name is invalid"],
      [{ method: "G T" }, "method is invalid"],
      [{ redirectPolicy: "none" }, "redirectPolicy"],
      [{ timeoutMs: -1 }, "timeoutMs"],
    ];
    for (const [patch, message] of cases) {
      const res = await request(s, "GET", origin.url("/echo"), patch);
      assert.equal(res.error?.code, -32602, JSON.stringify([patch, res]));
      assert.ok(res.error.message.includes(message), res.error.message);
    }
    const noId = await s.request("http/request", { method: "GET", url: origin.url("/echo") });
    assert.equal(noId.error?.code, -32602);
    assert.equal(noId.error.message, "missing field `requestId`");
    assert.equal(origin.seen.length, 0);
  });
});

Deno.test("http/request: redirects are followed, or answered with stop", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    const to = (code: number, target: string) =>
      origin.url(`/redirect?code=${code}&to=${encodeURIComponent(target)}`);
    const followed = await request(s, "GET", to(302, "/echo"));
    assert.equal(followed.result.status, 200);
    const seen = echoed(followed);
    assert.equal(seen.url, "/echo");
    assert.deepEqual(headerValues(seen, "referer"), [to(302, "/echo")]);
    const stopped = await request(s, "GET", to(302, "/echo"), { redirectPolicy: "stop" });
    assert.equal(stopped.result.status, 302);
    assert.deepEqual(
      stopped.result.headers.find((h: Msg) => h.name === "location"),
      { name: "location", value: "/echo" },
    );
    assert.equal(unb64(stopped.result.bodyBase64), "redirecting");
    // 303 turns a POST into a GET without body; 307 keeps both.
    const post = {
      bodyBase64: b64("data"),
      headers: [{ name: "Content-Type", value: "text/plain" }],
    };
    const see = echoed(await request(s, "POST", to(303, "/echo"), post));
    assert.deepEqual([see.method, see.body, headerValues(see, "content-type")], ["GET", "", []]);
    const keep = echoed(await request(s, "POST", to(307, "/echo"), post));
    assert.deepEqual([keep.method, keep.body, headerValues(keep, "content-type")], [
      "POST",
      "data",
      ["text/plain"],
    ]);
    const loop = await request(s, "GET", origin.url("/loop"));
    assert.equal(loop.error?.code, -32603);
    assert.equal(loop.error.message, "http/request failed: too many redirects");
    // The first and ten redirects: eleven requests, then the refusal.
    assert.equal(origin.seen.filter((r) => r.url === "/loop").length, 11);
    const ftp = await request(s, "GET", to(302, "ftp://127.0.0.1/x"));
    assert.equal(ftp.error?.code, -32603);
    assert.match(ftp.error.message, /redirect target uses unsupported URL scheme: ftp/);
  });
});

Deno.test("http/request: a redirect to another origin drops authorization and cookies", async () => {
  await using s = await httpServer();
  await withOrigin(async (first) => {
    await withOrigin(async (second) => {
      const credentials = {
        headers: [
          { name: "Authorization", value: "Bearer t" },
          { name: "Cookie", value: "c=1" },
          { name: "X-Keep", value: "k" },
        ],
      };
      const away = second.url("/echo", "localhost");
      const url = first.url(`/redirect?code=302&to=${encodeURIComponent(away)}`);
      const there = echoed(await request(s, "GET", url, credentials));
      assert.deepEqual(headerValues(there, "authorization"), []);
      assert.deepEqual(headerValues(there, "cookie"), []);
      assert.deepEqual(headerValues(there, "x-keep"), ["k"]);
      assert.deepEqual(headerValues(there, "host"), [`localhost:${second.port}`]);
      assert.deepEqual(headerValues(there, "referer"), [`http://127.0.0.1:${first.port}/`]);
      // Within one origin they go along.
      const home = first.url(`/redirect?code=302&to=/echo`);
      const here = echoed(await request(s, "GET", home, credentials));
      assert.deepEqual(headerValues(here, "authorization"), ["Bearer t"]);
      assert.deepEqual(headerValues(here, "cookie"), ["c=1"]);
    });
  });
});

Deno.test("http/request: a gzip body is decoded and its encoding headers dropped", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    const res = await request(s, "GET", origin.url("/gzip"));
    assert.equal(unb64(res.result.bodyBase64), "hello, gzip");
    const names = res.result.headers.map((h: Msg) => h.name);
    assert.ok(!names.includes("content-encoding"), names.join());
    assert.ok(!names.includes("content-length"), names.join());
    assert.ok(names.includes("content-type"));
    assert.deepEqual(headerValues(origin.seen[0], "accept-encoding"), ["gzip"]);
  });
});

Deno.test("http/request: transport failures are -32603", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    const gone = await Origin.start();
    await gone.close();
    const refused = await request(s, "GET", gone.url("/echo"));
    assert.equal(refused.error?.code, -32603);
    assert.match(refused.error.message, /^http\/request failed: /);
    const cut = await request(s, "GET", origin.url("/cut"));
    assert.equal(cut.error?.code, -32603);
    assert.match(cut.error.message, /^failed to read http\/request response body: /);
    // The server goes on.
    assert.equal((await request(s, "GET", origin.url("/echo"))).result.status, 200);
  });
});

Deno.test("http/request: timeoutMs bounds the whole exchange, on a reused host too", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    // A first exchange with the host, so that a kept-alive connection would be reused.
    assert.equal((await request(s, "GET", origin.url("/echo"))).result.status, 200);
    const noHead = await request(s, "GET", origin.url("/nohead"), { timeoutMs: 200 });
    assert.equal(noHead.error?.code, -32603);
    assert.equal(noHead.error.message, "http/request failed: timed out after 200 ms");
    const stalled = await request(s, "GET", origin.url("/hang"), { timeoutMs: 200 });
    assert.equal(stalled.error?.code, -32603);
    assert.match(stalled.error.message, /timed out after 200 ms$/);
  });
});

Deno.test("http/request: a sandbox that restricts the network is refused", async () => {
  await using s = await httpServer();
  await withOrigin(async (origin) => {
    const sandbox = (network: string) => ({ permissions: { type: "external", network } });
    const refused = await request(s, "GET", origin.url("/echo"), {
      sandbox: sandbox("restricted"),
    });
    assert.equal(refused.error?.code, -32600, JSON.stringify(refused));
    assert.match(refused.error.message, /sandbox restricts the network/);
    assert.equal(refused.error.data?.sandboxDenied, true);
    assert.equal(origin.seen.length, 0);
    const allowed = await request(s, "GET", origin.url("/echo"), { sandbox: sandbox("enabled") });
    assert.equal(allowed.result?.status, 200, JSON.stringify(allowed));
    const bad = await request(s, "GET", origin.url("/echo"), { sandbox: sandbox("sometimes") });
    assert.equal(bad.error?.code, -32602);
  });
});
