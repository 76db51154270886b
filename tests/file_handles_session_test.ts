/**
 * File handles of Codex-dialect sessions that outlive their connection (a
 * websocket server, `--session-grace-ms`). Our behaviour: handles belong to
 * the session, not to the connection, so a client that resumes within the
 * grace period goes on with the handles it had open; when the grace period
 * ends, every handle is discarded and an abandoned replace leaves the
 * target as it was, with no temporary file.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CodexWs, startTokenServer } from "./codex_cli_fixture.ts";
import { b64, eventually, type Msg, unb64 } from "./harness.ts";
import { withTempDir } from "./server_helpers.ts";

const TOKEN = "file-handles-session-test-token-0123";

/** Run `fn` with a fresh token server whose grace period is `graceMs`. */
async function withServer(graceMs: number, fn: (url: string) => Promise<void>): Promise<void> {
  const [s, stop] = await startTokenServer(TOKEN, ["--session-grace-ms", String(graceMs)]);
  try {
    await fn(s.url);
  } finally {
    await stop();
  }
}

/** The result of a request, failing on an error. */
async function call(c: CodexWs, method: string, params: Msg): Promise<Msg> {
  const answer = await c.request(method, params);
  assert.equal(answer.error, undefined, `${method}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/**
 * Resume session `id` on a new connection. The server may not have seen
 * the old connection drop yet; until it has, the session is "attached to
 * another connection" and we try again.
 */
async function resume(url: string, id: string): Promise<CodexWs> {
  let resumed: CodexWs | undefined;
  await eventually(
    async () => {
      const c = await CodexWs.open(url, TOKEN);
      const answer = await c.initialize(id);
      if (answer.result) {
        resumed = c;
        return true;
      }
      c.drop();
      assert.match(answer.error.message, /attached to another connection/);
      return false;
    },
    10_000,
    "the resume",
  );
  return resumed!;
}

const partials = async (dir: string) =>
  (await readdir(dir)).filter((name) => name.endsWith(".partial"));

Deno.test("codex session file handles: still usable after a resume within the grace period", async () => {
  await withTempDir(async (dir) => {
    await withServer(60_000, async (url) => {
      const target = join(dir, "target.txt");
      const source = join(dir, "source.txt");
      await writeFile(target, "before");
      await writeFile(source, "0123456789");
      const a = await CodexWs.open(url, TOKEN);
      const { sessionId } = (await a.initialize(null)).result;
      await call(a, "fs/open", { handleId: "w", path: `file://${target}`, mode: "replace" });
      await call(a, "fs/open", { handleId: "r", path: `file://${source}` });
      await call(a, "fs/writeBlock", { handleId: "w", offset: 0, chunk: b64("first ") });
      assert.equal(
        unb64((await call(a, "fs/readBlock", { handleId: "r", offset: 0, len: 4 })).chunk),
        "0123",
      );
      a.drop();
      const b = await resume(url, sessionId);
      assert.equal(await readFile(target, "utf8"), "before", "changed while detached");
      const rest = await call(b, "fs/readBlock", { handleId: "r", offset: 4, len: 100 });
      assert.deepEqual([unb64(rest.chunk), rest.eof], ["456789", true]);
      await call(b, "fs/writeBlock", { handleId: "w", offset: 6, chunk: b64("second") });
      await call(b, "fs/close", { handleId: "w" });
      await call(b, "fs/close", { handleId: "r" });
      assert.equal(await readFile(target, "utf8"), "first second");
      assert.deepEqual(await partials(dir), []);
      b.drop();
    });
  });
});

Deno.test("codex session file handles: after the grace period an abandoned replace leaves no trace", async () => {
  await withTempDir(async (dir) => {
    await withServer(300, async (url) => {
      const target = join(dir, "keep.bin");
      const original = Buffer.from("original contents");
      await writeFile(target, original);
      const a = await CodexWs.open(url, TOKEN);
      const { sessionId } = (await a.initialize(null)).result;
      await call(a, "fs/open", { handleId: "w", path: `file://${target}`, mode: "replace" });
      await call(a, "fs/open", { handleId: "n", path: `file://${dir}/new.bin`, mode: "replace" });
      const big = new Uint8Array(1024 * 1024).fill(7);
      await call(a, "fs/writeBlock", { handleId: "w", offset: 0, chunk: b64(big) });
      assert.equal((await partials(dir)).length, 2);
      a.drop();
      await eventually(async () => (await partials(dir)).length === 0, 10_000, "no partial");
      assert.deepEqual(await readFile(target), original);
      assert.deepEqual(await readdir(dir), ["keep.bin"]);
      // The session is gone, and its handles with it.
      const b = await CodexWs.open(url, TOKEN);
      const refused = await b.initialize(sessionId);
      assert.equal(refused.error?.code, -32600);
      assert.match(refused.error.message, /unknown session id/);
      b.drop();
      const c = await CodexWs.open(url, TOKEN);
      await c.initialize(null);
      const unknown = await c.request("fs/writeBlock", {
        handleId: "w",
        offset: 0,
        chunk: b64("x"),
      });
      assert.equal(unknown.error?.code, -32004);
      c.drop();
    });
  });
});
