/**
 * **[ext]** `fs/walk` and `http/request` for exec-server.v0 clients:
 * announced in `initialize.capabilities`, plain paths in and out (file
 * URIs accepted), defaults for what is left out, errno data, and the v0
 * sandbox (`deny` leaves a directory unread, `network: false` refuses a
 * request). The Codex dialect's forms: codex_walk_test.ts, http_*_test.ts.
 */
import assert from "node:assert/strict";
import { mkdir, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { NO_PROXY_ENV, Origin } from "./http_fixture.ts";
import { b64, type Msg, TestServer, unb64 } from "./harness.ts";
import { initializeResult, withTempDir } from "./server_helpers.ts";

const v0Server = () => TestServer.start(["--log-level", "off"], { env: NO_PROXY_ENV });

Deno.test("v0: fs/walk and http/request are announced in capabilities", async () => {
  await using s = await v0Server();
  const caps = initializeResult(s).capabilities;
  assert.ok(caps.methods.includes("fs/walk"), caps.methods.join());
  assert.ok(caps.methods.includes("http/request"), caps.methods.join());
  assert.equal(caps.walk, true);
  assert.deepEqual(caps.http, { request: true, stream: true, headerEnvVars: true });
});

async function tree(dir: string): Promise<void> {
  for (const d of ["open/inner", "secret", ".dot"]) await mkdir(join(dir, d), { recursive: true });
  for (const f of ["open/o", "open/inner/i", "secret/s", ".dot/d", "top"]) {
    await writeFile(join(dir, f), f);
  }
}

Deno.test("v0 fs/walk: options may be left out; plain paths answered", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    await tree(dir);
    await using s = await v0Server();
    const all = await s.call("fs/walk", { path: dir });
    assert.deepEqual(all.entries.map((e: Msg) => [e.path.slice(dir.length + 1), e.kind]), [
      [".dot", "directory"],
      ["open", "directory"],
      ["secret", "directory"],
      ["top", "file"],
      [".dot/d", "file"],
      ["open/inner", "directory"],
      ["open/o", "file"],
      ["secret/s", "file"],
      ["open/inner/i", "file"],
    ]);
    assert.deepEqual([all.errors, all.truncated], [[], false]);
    // A file URI is accepted; the answer is still plain paths. Any option alone.
    const shallow = await s.call("fs/walk", {
      path: pathToFileURL(dir).href,
      options: { maxDepth: 0, pruneHiddenDirectories: true },
    });
    assert.deepEqual(shallow.entries.map((e: Msg) => e.path), [
      join(dir, ".dot"),
      join(dir, "open"),
      join(dir, "secret"),
      join(dir, "top"),
    ]);
    const few = await s.call("fs/walk", { path: dir, options: { maxEntries: 2 } });
    assert.deepEqual([few.entries.length, few.truncated], [2, true]);
  });
});

Deno.test("v0 fs/walk: errors carry errno; the sandbox leaves denied directories unread", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    await tree(dir);
    await using s = await v0Server();
    const missing = await s.request("fs/walk", { path: join(dir, "missing") });
    assert.equal(missing.error?.code, -32603, "v0's code for a missing path");
    assert.equal(missing.error.data?.errno, "ENOENT");
    const zero = await s.request("fs/walk", { path: dir, options: { maxDirectories: 0 } });
    assert.equal(zero.error?.code, -32600);
    assert.equal(zero.error.data?.errno, "EINVAL");
    const badOption = await s.request("fs/walk", { path: dir, options: { maxDepth: "2" } });
    assert.equal(badOption.error?.code, -32602);
    const sandbox = { mode: "restricted", deny: [join(dir, "secret")] };
    const walked = await s.call("fs/walk", { path: dir, sandbox });
    const paths = walked.entries.map((e: Msg) => e.path);
    assert.ok(paths.includes(join(dir, "secret")), "listed");
    assert.ok(!paths.includes(join(dir, "secret", "s")), "not read");
    assert.deepEqual(walked.errors, [{
      path: join(dir, "secret"),
      message: `walk ${join(dir, "secret")}: permission denied`,
      errno: "EACCES",
    }]);
    const denied = await s.request("fs/walk", { path: join(dir, "secret"), sandbox });
    assert.equal(denied.error?.code, -32600);
    assert.equal(denied.error.data?.sandboxDenied, true);
  });
});

Deno.test("v0 http/request: buffered and streamed, and refused by a sandbox without network", async () => {
  const origin = await Origin.start();
  try {
    await using s = await v0Server();
    const res = await s.call("http/request", {
      method: "PUT",
      url: origin.url("/echo"),
      requestId: "v0-1",
      bodyBase64: b64("payload"),
    });
    assert.equal(res.status, 200);
    const seen = JSON.parse(unb64(res.bodyBase64));
    assert.deepEqual([seen.method, seen.body], ["PUT", "payload"]);
    const head = await s.call("http/request", {
      method: "GET",
      url: origin.url("/gzip"),
      requestId: "v0-2",
      streamResponse: true,
    });
    assert.equal(head.bodyBase64, "");
    await s.waitFor((m) => m.method === "http/request/bodyDelta" && m.params.done);
    const deltas = s.messages.filter((m) => m.method === "http/request/bodyDelta").map((m) =>
      m.params
    );
    assert.deepEqual(deltas.map((d) => d.seq), deltas.map((_, i) => i + 1));
    assert.equal(deltas.map((d) => unb64(d.deltaBase64)).join(""), "hello, gzip");
    assert.deepEqual(deltas.at(-1), {
      requestId: "v0-2",
      seq: deltas.length,
      deltaBase64: "",
      done: true,
      error: null,
    });
    const closed = await s.request("http/request", {
      method: "GET",
      url: origin.url("/echo"),
      requestId: "v0-3",
      sandbox: { mode: "restricted" },
    });
    assert.equal(closed.error?.code, -32600);
    assert.equal(closed.error.data?.sandboxDenied, true);
    const open = await s.request("http/request", {
      method: "GET",
      url: origin.url("/echo"),
      requestId: "v0-4",
      sandbox: { mode: "restricted", network: true },
    });
    assert.equal(open.result?.status, 200, JSON.stringify(open));
    assert.equal(origin.seen.length, 3, "the refused request was never sent");
  } finally {
    await origin.close();
  }
});
