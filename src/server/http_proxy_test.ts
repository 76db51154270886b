import assert from "node:assert/strict";
import { bypassesProxy, proxyAuthorization, proxyFor } from "./http_proxy.ts";

Deno.test("bypassesProxy: host names, domain suffixes and `*`", () => {
  const list = "localhost, .internal.example,example.com";
  assert.equal(bypassesProxy("localhost", "80", list), true);
  assert.equal(bypassesProxy("LOCALHOST", "80", list), true, "names match without regard to case");
  // `.internal.example` and `example.com` both cover the domain and its subdomains.
  assert.equal(bypassesProxy("a.internal.example", "443", list), true);
  assert.equal(bypassesProxy("internal.example", "443", list), true);
  assert.equal(bypassesProxy("api.example.com", "443", list), true);
  assert.equal(bypassesProxy("example.com", "443", list), true);
  // A suffix matches at a dot only.
  assert.equal(bypassesProxy("notexample.com", "443", list), false);
  assert.equal(bypassesProxy("example.org", "80", list), false);
  assert.equal(bypassesProxy("anything", "1", "*"), true);
  assert.equal(bypassesProxy("api.example.com", "443", "*.example.com"), true);
  assert.equal(bypassesProxy("example.com", "443", "*.example.com"), true);
});

Deno.test("bypassesProxy: empty lists, separators, ports and addresses", () => {
  assert.equal(bypassesProxy("localhost", "80", undefined), false);
  assert.equal(bypassesProxy("localhost", "80", ""), false);
  assert.equal(bypassesProxy("localhost", "80", " , ,"), false);
  assert.equal(bypassesProxy("b.test", "80", "a.test b.test"), true, "white space separates too");
  assert.equal(bypassesProxy("127.0.0.1", "8080", "127.0.0.1"), true);
  assert.equal(bypassesProxy("127.0.0.2", "8080", "127.0.0.1"), false);
  // An entry with a port covers that port only.
  assert.equal(bypassesProxy("svc.test", "8080", "svc.test:8080"), true);
  assert.equal(bypassesProxy("svc.test", "80", "svc.test:8080"), false);
  // IPv6 addresses, with or without brackets on either side.
  assert.equal(bypassesProxy("[::1]", "80", "::1"), true);
  assert.equal(bypassesProxy("[::1]", "80", "[::1]"), true);
  assert.equal(bypassesProxy("::1", "80", "[::1]"), true);
  assert.equal(bypassesProxy("[::2]", "80", "::1"), false);
});

const HTTP = new URL("http://api.test/x");
const HTTPS = new URL("https://api.test/x");

Deno.test("proxyFor: each scheme's variable, lower case first, then all_proxy", () => {
  assert.equal(proxyFor(HTTP, {}), undefined);
  assert.equal(proxyFor(HTTP, { http_proxy: "http://lower:1" })?.host, "lower:1");
  assert.equal(proxyFor(HTTP, { HTTP_PROXY: "http://upper:1" })?.host, "upper:1");
  assert.equal(
    proxyFor(HTTP, { http_proxy: "http://lower:1", HTTP_PROXY: "http://upper:1" })?.host,
    "lower:1",
  );
  // An https proxy setting is not used for http, nor the reverse.
  assert.equal(proxyFor(HTTP, { https_proxy: "http://tls:1" }), undefined);
  assert.equal(proxyFor(HTTPS, { http_proxy: "http://plain:1" }), undefined);
  assert.equal(proxyFor(HTTPS, { HTTPS_PROXY: "http://tls:1" })?.host, "tls:1");
  for (const env of [{ all_proxy: "http://all:1" }, { ALL_PROXY: "http://all:1" }]) {
    assert.equal(proxyFor(HTTP, env)?.host, "all:1");
    assert.equal(proxyFor(HTTPS, env)?.host, "all:1");
  }
  assert.equal(proxyFor(HTTP, { http_proxy: "", HTTP_PROXY: "http://upper:1" })?.host, "upper:1");
});

Deno.test("proxyFor: a bare host:port is an http proxy; other schemes go direct", () => {
  assert.equal(proxyFor(HTTP, { http_proxy: "proxy.test:3128" })?.href, "http://proxy.test:3128/");
  assert.equal(proxyFor(HTTP, { http_proxy: "socks5://proxy.test:1080" }), undefined);
  assert.equal(proxyFor(HTTPS, { https_proxy: "https://proxy.test:443" }), undefined);
  assert.equal(proxyFor(HTTP, { http_proxy: "http://[bad" }), undefined);
});

Deno.test("proxyFor: no_proxy sends matching hosts direct, at the scheme's default port", () => {
  const env = { http_proxy: "http://p:1", https_proxy: "http://p:1" };
  assert.equal(proxyFor(HTTP, { ...env, no_proxy: "api.test" }), undefined);
  assert.equal(proxyFor(HTTP, { ...env, NO_PROXY: ".test" }), undefined);
  assert.equal(proxyFor(HTTP, { ...env, no_proxy: "other.test" })?.host, "p:1");
  assert.equal(proxyFor(HTTP, { ...env, no_proxy: "api.test:80" }), undefined);
  assert.equal(proxyFor(HTTPS, { ...env, no_proxy: "api.test:80" })?.host, "p:1");
  assert.equal(proxyFor(HTTPS, { ...env, no_proxy: "api.test:443" }), undefined);
  assert.equal(
    proxyFor(new URL("http://api.test:8080/"), { ...env, no_proxy: "api.test:8080" }),
    undefined,
  );
  assert.equal(proxyFor(HTTP, { ...env, no_proxy: "*" }), undefined);
});

Deno.test("proxyAuthorization: Basic credentials from the proxy URL, percent-decoded", () => {
  assert.deepEqual(proxyAuthorization(new URL("http://proxy:1")), {});
  assert.deepEqual(proxyAuthorization(new URL("http://user:pw@proxy:1")), {
    "proxy-authorization": `Basic ${btoa("user:pw")}`,
  });
  assert.deepEqual(proxyAuthorization(new URL("http://us%40er:p%3Aw@proxy:1")), {
    "proxy-authorization": `Basic ${btoa("us@er:p:w")}`,
  });
  assert.deepEqual(proxyAuthorization(new URL("http://user@proxy:1")), {
    "proxy-authorization": `Basic ${btoa("user:")}`,
  });
});

Deno.test("bypassesProxy: address blocks in no_proxy, IPv4 and IPv6", () => {
  const list = "internal.example, 10.0.0.0/8, fd00::/8";
  assert.equal(bypassesProxy("10.20.30.40", "80", list), true);
  assert.equal(bypassesProxy("11.0.0.1", "80", list), false);
  assert.equal(bypassesProxy("[fd12::1]", "443", list), true);
  assert.equal(bypassesProxy("[2001:db8::1]", "443", list), false);
  // A block never matches a name, however it resolves.
  assert.equal(bypassesProxy("ten.example", "80", list), false);
});
