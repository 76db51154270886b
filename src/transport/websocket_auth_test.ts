import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BearerToken,
  generateToken,
  isLoopbackHost,
  normalizeOrigin,
  OriginPolicy,
  readTokenFile,
  validateToken,
  WebSocketConfigError,
} from "./websocket_auth.ts";

Deno.test("generateToken: 64 hex digits, different each time", () => {
  const a = generateToken();
  const b = generateToken();
  assert.match(a, /^[0-9a-f]{64}$/);
  assert.notEqual(a, b);
});

Deno.test("BearerToken: only `Bearer <token>` matches", () => {
  const t = new BearerToken("s3cret-token");
  assert.equal(t.matches("Bearer s3cret-token"), true);
  assert.equal(t.matches("bearer   s3cret-token "), true);
  for (
    const bad of [
      null,
      undefined,
      "",
      "Bearer",
      "Bearer ",
      "s3cret-token",
      "Basic s3cret-token",
      "Bearer s3cret-toke",
      "Bearer s3cret-tokenx",
      "Bearer s3cret-token extra",
      "Bearer S3CRET-TOKEN",
    ]
  ) {
    assert.equal(t.matches(bad), false, JSON.stringify(bad));
  }
});

Deno.test("validateToken: refuses empty, spaced and non-ASCII tokens", () => {
  assert.equal(validateToken("abc"), "abc");
  assert.throws(() => validateToken(""), WebSocketConfigError);
  assert.throws(() => validateToken("a b"), /printable ASCII/);
  assert.throws(() => validateToken("tökén"), /printable ASCII/);
  assert.throws(() => new BearerToken(""), /is empty/);
});

Deno.test("readTokenFile: trims, reports permissive modes, names the file", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ws-auth-"));
  try {
    const file = join(dir, "token");
    await writeFile(file, "\n  abc123 \r\n");
    await chmod(file, 0o600);
    assert.deepEqual(await readTokenFile(file), { token: "abc123", readableByOthers: false });
    await chmod(file, 0o644);
    assert.equal((await readTokenFile(file)).readableByOthers, true);
    await writeFile(file, " \n");
    await assert.rejects(readTokenFile(file), /token file ".*token" is empty/);
    await assert.rejects(readTokenFile(join(dir, "nope")), /cannot read token file ".*nope"/);
  } finally {
    await rm(dir, { recursive: true });
  }
});

Deno.test("normalizeOrigin and OriginPolicy", () => {
  assert.equal(normalizeOrigin("HTTPS://App.Example:443"), "https://app.example");
  assert.equal(normalizeOrigin("http://localhost:5173/"), "http://localhost:5173");
  assert.equal(normalizeOrigin("null"), "null");
  assert.throws(() => normalizeOrigin("app.example"), /not an origin/);
  assert.throws(() => normalizeOrigin("https://app.example/path"), /not an origin/);
  assert.throws(() => new OriginPolicy(["*"]), WebSocketConfigError);

  const policy = new OriginPolicy(["https://app.example"]);
  assert.equal(policy.allows(null), true, "non-browser clients send no Origin");
  assert.equal(policy.allows("https://app.example"), true);
  assert.equal(policy.allows("https://APP.example:443"), true);
  assert.equal(policy.allows("https://app.example:8443"), false);
  assert.equal(policy.allows("http://app.example"), false);
  assert.equal(policy.allows("null"), false);
  assert.equal(policy.allows("garbage"), false);
  assert.equal(new OriginPolicy([]).allows("https://app.example"), false);
});

Deno.test("isLoopbackHost", () => {
  for (
    const h of [
      "localhost",
      "LOCALHOST",
      "127.0.0.1",
      "127.1.2.3",
      "::1",
      "[::1]",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
    ]
  ) {
    assert.equal(isLoopbackHost(h), true, h);
  }
  for (
    const h of [
      "0.0.0.0",
      "::",
      "192.168.1.2",
      "10.0.0.1",
      "example.com",
      "localhost.evil.com",
      "::ffff:10.0.0.1",
      "128.0.0.1",
    ]
  ) {
    assert.equal(isLoopbackHost(h), false, h);
  }
});
