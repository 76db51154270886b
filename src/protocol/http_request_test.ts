import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "./errors.ts";
import { checkHttpRequest, MAX_REDIRECTS } from "./http_request.ts";

const BASE = { method: "GET", url: "http://127.0.0.1:8080/x?q=1", requestId: "r1" };

/** Check `BASE` with `patch` laid over it, resolving variables in `env`. */
const check = (patch: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
  checkHttpRequest({ ...BASE, ...patch }, env);

/** Assert that `fn` throws an InvalidParams RpcError whose message matches. */
function invalid(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, ErrorCode.InvalidParams);
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("checkHttpRequest: the defaults of a minimal request", () => {
  const r = check();
  assert.equal(r.method, "GET");
  assert.equal(r.url.href, "http://127.0.0.1:8080/x?q=1");
  assert.deepEqual(r.headers, []);
  assert.deepEqual(r.body, new Uint8Array());
  assert.equal(r.timeoutMs, undefined);
  assert.equal(r.follow, true);
  assert.equal(r.requestId, "r1");
  assert.equal(r.stream, false);
  assert.equal(MAX_REDIRECTS, 10);
  // Null means absent for the optional members.
  const nulls = check({
    bodyBase64: null,
    timeoutMs: null,
    redirectPolicy: null,
    streamResponse: null,
  });
  assert.deepEqual([nulls.body.byteLength, nulls.timeoutMs, nulls.follow, nulls.stream], [
    0,
    undefined,
    true,
    false,
  ]);
});

Deno.test("checkHttpRequest: method, url and requestId are required, in that order", () => {
  invalid(
    () => checkHttpRequest({ url: BASE.url, requestId: "r" }, {}),
    /^missing field `method`$/,
  );
  invalid(() => checkHttpRequest({ method: "GET", requestId: "r" }, {}), /^missing field `url`$/);
  invalid(
    () => checkHttpRequest({ method: "GET", url: BASE.url }, {}),
    /^missing field `requestId`$/,
  );
  invalid(() => checkHttpRequest({}, {}), /^missing field `method`$/);
  invalid(() => check({ requestId: 5 }), /^requestId must be a string, got 5$/);
  invalid(() => check({ method: ["GET"] }), /^method must be a string/);
  invalid(() => check({ url: 80 }), /^url must be a string, got 80$/);
});

Deno.test("checkHttpRequest: the method is an HTTP token, sent as given", () => {
  assert.equal(check({ method: "PATCH" }).method, "PATCH");
  assert.equal(check({ method: "get" }).method, "get");
  invalid(() => check({ method: "G T" }), /^http\/request method is invalid: "G T"$/);
  invalid(() => check({ method: "" }), /method is invalid/);
  invalid(() => check({ method: "GET\r\n" }), /method is invalid/);
});

Deno.test("checkHttpRequest: only absolute http and https URLs", () => {
  assert.equal(check({ url: "https://example.com" }).url.protocol, "https:");
  for (
    const [url, scheme] of [["ftp://x/", "ftp"], ["file:///etc/passwd", "file"], ["ws://h/", "ws"]]
  ) {
    invalid(
      () => check({ url }),
      new RegExp(`^http/request only supports http and https URLs, got ${scheme}$`),
    );
  }
  invalid(() => check({ url: "not a url" }), /^http\/request url is invalid: "not a url"/);
  invalid(() => check({ url: "/relative" }), /url is invalid/);
});

Deno.test("checkHttpRequest: headers keep their order and repeats, names in lower case", () => {
  const r = check({
    headers: [
      { name: "X-A", value: "1" },
      { name: "x-a", value: "2" },
      { name: "Content-Type", value: "text/plain; charset=utf-8" },
      { name: "X-Tab", value: "a\tb" },
      { name: "X-Utf8", value: "caf\u00e9", valueEnvVar: null },
    ],
  });
  assert.deepEqual(r.headers, [
    ["x-a", "1"],
    ["x-a", "2"],
    ["content-type", "text/plain; charset=utf-8"],
    ["x-tab", "a\tb"],
    ["x-utf8", "caf\u00e9"],
  ]);
});

Deno.test("checkHttpRequest: bad header names and values are refused, CR and LF above all", () => {
  const header = (name: unknown, value: unknown) => () => check({ headers: [{ name, value }] });
  invalid(header("X Y", "a"), /^http\/request header name is invalid: "X Y"$/);
  invalid(header("X:Y", "a"), /header name is invalid/);
  invalid(header("", "a"), /header name is invalid/);
  invalid(header(7, "a"), /header name is invalid: 7/);
  for (const value of ["a\r\nInjected: 1", "a\nb", "a\rb", "a\u0000b", "a\u007fb"]) {
    invalid(
      header("X", value),
      /^http\/request header value is invalid for X: control characters$/,
    );
  }
  invalid(header("X", 1), /^headers\[0\]\.value must be a string, got 1$/);
  invalid(() => check({ headers: { X: "1" } }), /^headers must be an array of \{name, value\}/);
  invalid(() => check({ headers: ["X: 1"] }), /^headers\[0\] must be an object \{name, value\}/);
});

Deno.test("checkHttpRequest: valueEnvVar appends the server's variable to the value", () => {
  const env = { TOK: "sekrit", EMPTY: "", NEWLINE: "a\nb" };
  const auth = (valueEnvVar: unknown) => () =>
    check({ headers: [{ name: "Authorization", value: "Bearer ", valueEnvVar }] }, env);
  assert.deepEqual(auth("TOK")().headers, [["authorization", "Bearer sekrit"]]);
  invalid(
    auth("UNSET"),
    /^http\/request header Authorization requires executor environment variable UNSET$/,
  );
  invalid(
    auth("EMPTY"),
    /^http\/request header Authorization requires a non-empty executor environment variable EMPTY$/,
  );
  // What the variable holds is checked like any value: it cannot split the request.
  invalid(auth("NEWLINE"), /header value is invalid for Authorization/);
  invalid(auth(3), /^headers\[0\]\.valueEnvVar must be a string, got 3$/);
});

Deno.test("checkHttpRequest: the body is base64", () => {
  assert.deepEqual(check({ bodyBase64: "aGVsbG8=" }).body, new TextEncoder().encode("hello"));
  assert.equal(check({ bodyBase64: "" }).body.byteLength, 0);
  invalid(() => check({ bodyBase64: "not base64!" }), /^bodyBase64: /);
  invalid(() => check({ bodyBase64: 12 }), /^bodyBase64 must be a string, got 12$/);
});

Deno.test("checkHttpRequest: timeoutMs is a non-negative integer or null", () => {
  assert.equal(check({ timeoutMs: 0 }).timeoutMs, 0);
  assert.equal(check({ timeoutMs: 30_000 }).timeoutMs, 30_000);
  for (const timeoutMs of [-1, 1.5, "5", true]) {
    invalid(() => check({ timeoutMs }), /^timeoutMs must be a non-negative integer or null, got /);
  }
});

Deno.test("checkHttpRequest: redirectPolicy is follow or stop; streamResponse a boolean", () => {
  assert.equal(check({ redirectPolicy: "follow" }).follow, true);
  assert.equal(check({ redirectPolicy: "stop" }).follow, false);
  for (const redirectPolicy of ["none", "Follow", 10, { follow: true }]) {
    invalid(() => check({ redirectPolicy }), /^redirectPolicy must be "follow" or "stop", got /);
  }
  assert.equal(check({ streamResponse: true }).stream, true);
  invalid(() => check({ streamResponse: "yes" }), /^streamResponse must be a boolean, got "yes"$/);
});
