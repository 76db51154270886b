import assert from "node:assert/strict";
import { isFileUri, parsePath } from "./paths.ts";

Deno.test("parsePath: absolute paths pass unchanged", () => {
  assert.deepEqual(parsePath("/"), { ok: true, path: "/", isUri: false });
  assert.deepEqual(parsePath("/tmp/a b/../c"), { ok: true, path: "/tmp/a b/../c", isUri: false });
});

Deno.test("parsePath: relative paths and NUL are refused with a reason", () => {
  assert.deepEqual(parsePath("tmp/a"), {
    ok: false,
    isUri: false,
    problem: "notAbsolute",
    reason: 'must be an absolute path, got "tmp/a"',
  });
  assert.deepEqual(parsePath(""), {
    ok: false,
    isUri: false,
    problem: "notAbsolute",
    reason: 'must be an absolute path, got ""',
  });
  assert.deepEqual(parsePath("/a\0b"), {
    ok: false,
    isUri: false,
    problem: "containsNul",
    reason: 'must not contain NUL: "/a\\u0000b"',
  });
});

Deno.test("parsePath: file URIs are decoded, in any case of the scheme", () => {
  assert.deepEqual(parsePath("file:///tmp/a%20b"), { ok: true, path: "/tmp/a b", isUri: true });
  assert.deepEqual(parsePath("file://localhost/etc/hosts"), {
    ok: true,
    path: "/etc/hosts",
    isUri: true,
  });
  assert.deepEqual(parsePath("file:/etc"), { ok: true, path: "/etc", isUri: true });
  assert.deepEqual(parsePath("FILE:///etc"), { ok: true, path: "/etc", isUri: true });
  assert.deepEqual(parsePath("file:///tmp/%3Fq%23h"), { ok: true, path: "/tmp/?q#h", isUri: true });
});

Deno.test("parsePath: each bad file URI has its own problem", () => {
  const cases: [string, string, RegExp][] = [
    ["file:relative", "relativeUri", /^must be an absolute file URI, got "file:relative"$/],
    ["file:///a%ZZ", "invalidUri", /^is not a valid file URI: /],
    ["file://example.com/etc", "remoteHost", /^names a remote host: /],
    ["file:///tmp/a?b", "queryOrFragment", /query or fragment/],
    ["file:///tmp/a#b", "queryOrFragment", /query or fragment/],
    ["file:///tmp/a?", "queryOrFragment", /query or fragment/],
    ["file:///etc%2Fpasswd", "encodedSlash", /encodes a '\/' \(%2F\)/],
    ["file:///a%00b", "containsNul", /^must not contain NUL: "file:\/\/\/a%00b"$/],
  ];
  for (const [value, problem, reason] of cases) {
    const parsed = parsePath(value);
    assert.ok(!parsed.ok, value);
    assert.equal(parsed.problem, problem, value);
    assert.equal(parsed.isUri, true, value);
    assert.match(parsed.reason, reason, value);
  }
});

Deno.test("parsePath: with fileUris false a file: value is just a relative path", () => {
  const parsed = parsePath("FILE:///etc", { fileUris: false });
  assert.deepEqual(parsed, {
    ok: false,
    isUri: false,
    problem: "notAbsolute",
    reason: 'must be an absolute path, got "FILE:///etc"',
  });
});

Deno.test("parsePath: long values are shortened in the reason", () => {
  const parsed = parsePath("x".repeat(200));
  assert.ok(!parsed.ok);
  assert.match(parsed.reason, /got "x{76}\.\.\.$/);
});

Deno.test("isFileUri ignores the case of the scheme only", () => {
  assert.equal(isFileUri("file:x"), true);
  assert.equal(isFileUri("File:///x"), true);
  assert.equal(isFileUri("/file:x"), false);
  assert.equal(isFileUri("files:/x"), false);
});
