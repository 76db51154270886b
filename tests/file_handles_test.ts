/**
 * File handles (`fs/open`, `fs/readBlock`, `fs/writeBlock`, `fs/close`)
 * against the real server over stdio, in both dialects: 5 MiB read and
 * replaced in 1 MiB blocks (one at a time and pipelined), a replace that
 * changes nothing until its close and leaves no trace when abandoned, the
 * sandbox gate at the open, and each dialect's errors.
 * tests/file_handles_session_test.ts covers Codex sessions that outlive
 * their connection.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import { chmod, lstat, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { b64, type Msg, TestServer, unb64Bytes } from "./harness.ts";
import { codexServer, initializeResult, withTempDir } from "./server_helpers.ts";
import { codexWorkspaceWrite, type SandboxBox, sandboxBox } from "./sandbox_fixture.ts";

const MiB = 1024 * 1024;

/** Send every request at once, then wait for all the answers, in request order. */
async function pipelined(
  s: TestServer,
  requests: [method: string, params: Msg][],
): Promise<Msg[]> {
  const ids = requests.map(([method, params]) => {
    const id = s.newId();
    s.send({ id, method, params });
    return id;
  });
  return await Promise.all(ids.map((id) => s.response(id, 60_000)));
}

/** The results of `answers`, failing on the first error. */
function results(answers: Msg[]): Msg[] {
  for (const a of answers) assert.equal(a.error, undefined, JSON.stringify(a.error));
  return answers.map((a) => a.result);
}

/** The `.partial` files in `dir`. */
async function partials(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith(".partial"));
}

/** The blocks of `data` at the block indexes `order`, as `fs/writeBlock` params. */
function writeBlocks(handleId: string, data: Uint8Array, order: number[]): Msg[] {
  return order.map((i) => ({
    handleId,
    offset: i * MiB,
    chunk: b64(data.subarray(i * MiB, (i + 1) * MiB)),
  }));
}

Deno.test("codex file handles: a 5 MiB file read in 1 MiB blocks, one by one and pipelined", async () => {
  await withTempDir(async (dir) => {
    await using s = await codexServer();
    const data = new Uint8Array(randomBytes(5 * MiB));
    const path = join(dir, "big.bin");
    await writeFile(path, data);
    const uri = `file://${path}`;
    assert.deepEqual(await s.call("fs/open", { handleId: "r1", path: uri, mode: "read" }), {
      handleId: "r1",
    });
    const parts: Uint8Array[] = [];
    let eofs = 0;
    for (let offset = 0; eofs === 0; offset += MiB) {
      const r = await s.call("fs/readBlock", { handleId: "r1", offset, len: MiB });
      parts.push(unb64Bytes(r.chunk));
      if (r.eof) eofs++;
    }
    // Five full blocks are not yet the end: a sixth, empty, says eof.
    assert.deepEqual(parts.map((p) => p.byteLength), [MiB, MiB, MiB, MiB, MiB, 0]);
    assert.deepEqual(new Uint8Array(Buffer.concat(parts)), data);
    // Pipelined: three handles (mode absent: read) and 21 blocks asked at once,
    // more bytes than the session holds in flight at once (16 MiB).
    const ids = ["p1", "p2", "p3"];
    results(await pipelined(s, ids.map((handleId) => ["fs/open", { handleId, path: uri }])));
    const reads = ids.flatMap((handleId) =>
      [6, 4, 2, 0, 1, 3, 5].map((i): [string, Msg] => [
        "fs/readBlock",
        { handleId, offset: i * MiB, len: MiB },
      ])
    );
    const answers = results(await pipelined(s, reads));
    for (const [k, handleId] of ids.entries()) {
      const mine = answers.slice(k * 7, (k + 1) * 7);
      const byIndex = [6, 4, 2, 0, 1, 3, 5].map((i, j) => [i, mine[j]] as const)
        .sort((a, b) => a[0] - b[0]);
      const bytes = Buffer.concat(byIndex.map(([, r]) => unb64Bytes(r.chunk)));
      assert.deepEqual(new Uint8Array(bytes), data, handleId);
      assert.deepEqual(byIndex.map(([, r]) => r.eof), [
        false,
        false,
        false,
        false,
        false,
        true,
        true,
      ]);
    }
    results(await pipelined(s, ["r1", ...ids].map((handleId) => ["fs/close", { handleId }])));
    const gone = await s.request("fs/readBlock", { handleId: "p1", offset: 0, len: 1 });
    assert.equal(gone.error?.code, -32004);
    assert.match(gone.error.message, /unknown file handle `p1`/);
  });
});

Deno.test("codex file handles: replace in out-of-order blocks changes nothing until the close", async () => {
  await withTempDir(async (dir) => {
    await using s = await codexServer();
    const target = join(dir, "target.bin");
    await writeFile(target, "the old contents");
    await chmod(target, 0o640);
    const data = new Uint8Array(randomBytes(5 * MiB));
    await s.call("fs/open", { handleId: "w", path: `file://${target}`, mode: "replace" });
    const blocks = writeBlocks("w", data, [3, 0, 4, 2, 1]);
    results(await pipelined(s, blocks.map((p): [string, Msg] => ["fs/writeBlock", p])));
    assert.equal(await readFile(target, "utf8"), "the old contents", "changed before the close");
    assert.equal((await partials(dir)).length, 1);
    assert.deepEqual(await s.call("fs/close", { handleId: "w" }), {});
    assert.deepEqual(new Uint8Array(await readFile(target)), data);
    assert.equal((await stat(target)).mode & 0o777, 0o640, "the old file's mode");
    assert.deepEqual(await partials(dir), []);
    // [ext] eof commits at once; blocks after it are refused.
    const created = join(dir, "created.txt");
    await s.call("fs/open", { handleId: "e", path: `file://${created}`, mode: "replace" });
    await s.call("fs/writeBlock", { handleId: "e", offset: 0, chunk: b64("done"), eof: true });
    assert.equal(await readFile(created, "utf8"), "done");
    const late = await s.request("fs/writeBlock", { handleId: "e", offset: 4, chunk: b64("!") });
    assert.equal(late.error?.code, -32600);
    assert.match(late.error.message, /already completed/);
    await s.call("fs/close", { handleId: "e" });
    assert.deepEqual(await partials(dir), []);
  });
});

Deno.test("codex file handles: errors in the CLI's codes", async () => {
  await withTempDir(async (dir) => {
    await using s = await codexServer();
    await writeFile(join(dir, "f"), "x");
    const missing = await s.request("fs/open", { handleId: "m", path: `file://${dir}/nope` });
    assert.equal(missing.error?.code, -32004);
    assert.equal(missing.error.data?.errno, "ENOENT");
    const isDir = await s.request("fs/open", { handleId: "d", path: `file://${dir}` });
    assert.equal(isDir.error?.code, -32600);
    assert.match(isDir.error.message, /is not a file/);
    const unknown = await s.request("fs/writeBlock", { handleId: "u", offset: 0, chunk: b64("x") });
    assert.equal(unknown.error?.code, -32004);
    await s.call("fs/open", { handleId: "r", path: `file://${dir}/f` });
    const dup = await s.request("fs/open", { handleId: "r", path: `file://${dir}/f` });
    assert.equal(dup.error?.code, -32600);
    const wrongMode = await s.request("fs/writeBlock", {
      handleId: "r",
      offset: 0,
      chunk: b64("x"),
    });
    assert.equal(wrongMode.error?.code, -32603);
    assert.equal(wrongMode.error.data?.errno, "EBADF");
    const tooBig = await s.request("fs/readBlock", { handleId: "r", offset: 0, len: MiB + 1 });
    assert.equal(tooBig.error?.code, -32600);
    const longId = await s.request("fs/open", {
      handleId: "x".repeat(33),
      path: `file://${dir}/f`,
    });
    assert.equal(longId.error?.code, -32600);
    assert.deepEqual(await s.call("fs/close", { handleId: "never-opened" }), {});
    assert.deepEqual(await readdir(dir), ["f"]);
  });
});

Deno.test("codex file handles: a replace abandoned when stdin closes leaves no trace", async () => {
  await withTempDir(async (dir) => {
    const s = await codexServer();
    const target = join(dir, "keep.txt");
    await writeFile(target, "original");
    await s.call("fs/open", { handleId: "w", path: `file://${target}`, mode: "replace" });
    await s.call("fs/writeBlock", { handleId: "w", offset: 0, chunk: b64("clobbered") });
    assert.equal((await partials(dir)).length, 1);
    const { code } = await s.close();
    assert.equal(code, 0, s.stderr);
    assert.equal(await readFile(target, "utf8"), "original");
    assert.deepEqual(await partials(dir), []);
  });
});

const workspaceWrite = (box: SandboxBox): Msg => codexWorkspaceWrite(box.ws);

Deno.test("codex file handles: workspace-write refuses a replace outside the workspace", async () => {
  const box = await sandboxBox();
  try {
    await using s = await codexServer();
    const sandbox = workspaceWrite(box);
    const open = (handleId: string, path: string, mode: string) =>
      s.request("fs/open", { handleId, path: `file://${path}`, mode, sandbox });
    for (
      const [i, path] of [join(box.outside, "new.txt"), join(box.ws, "link/new.txt")].entries()
    ) {
      const denied = await open(`o${i}`, path, "replace");
      assert.equal(denied.error?.code, -32600, JSON.stringify(denied));
      assert.equal(denied.error.data?.sandboxDenied, true);
      assert.equal(denied.error.data?.errno, "EACCES");
    }
    assert.equal((await open("git", join(box.ws, ".git/config"), "replace")).error?.code, -32600);
    assert.deepEqual(await readdir(box.outside), [], "nothing created outside");
    assert.deepEqual(await readdir(join(box.ws, ".git")), ["config"]);
    // Reading is allowed everywhere; replacing inside the workspace too.
    await writeFile(join(box.outside, "readable"), "r");
    assert.equal((await open("r", join(box.outside, "readable"), "read")).error, undefined);
    assert.equal((await open("in", join(box.ws, "in.txt"), "replace")).error, undefined);
    await s.call("fs/writeBlock", { handleId: "in", offset: 0, chunk: b64("inside") });
    await s.call("fs/close", { handleId: "in" });
    assert.equal(await readFile(join(box.ws, "in.txt"), "utf8"), "inside");
    assert.equal(await lstat(join(box.outside, "new.txt")).catch(() => undefined), undefined);
  } finally {
    await box.cleanup();
  }
});

Deno.test("v0 file handles: announced, plain paths, v0 errors", async () => {
  await withTempDir(async (dir) => {
    await using s = await TestServer.start(["--log-level", "off"]);
    const caps = initializeResult(s).capabilities;
    assert.deepEqual(caps.fileHandles, { maxOpen: 128, maxBlockBytes: MiB });
    for (const m of ["fs/open", "fs/readBlock", "fs/writeBlock", "fs/close"]) {
      assert.ok(caps.methods.includes(m), m);
    }
    const data = new Uint8Array(randomBytes(2 * MiB + 5));
    const target = join(dir, "t.bin");
    await s.call("fs/open", { handleId: "w", path: target, mode: "replace" });
    const blocks = writeBlocks("w", data, [2, 1, 0]);
    results(await pipelined(s, blocks.map((p): [string, Msg] => ["fs/writeBlock", p])));
    await assert.rejects(stat(target), /ENOENT/, "created before the close");
    await s.call("fs/close", { handleId: "w" });
    assert.deepEqual(new Uint8Array(await readFile(target)), data);
    await s.call("fs/open", { handleId: "r", path: target });
    const tail = await s.call("fs/readBlock", { handleId: "r", offset: 2 * MiB, len: MiB });
    assert.deepEqual([unb64Bytes(tail.chunk), tail.eof], [data.subarray(2 * MiB), true]);
    await s.call("fs/close", { handleId: "r" });
    const unknown = await s.request("fs/readBlock", { handleId: "r", offset: 0, len: 1 });
    assert.equal(unknown.error?.code, -32600);
    assert.match(unknown.error.message, /unknown file handle `r`/);
    const missing = await s.request("fs/open", { handleId: "m", path: join(dir, "nope") });
    assert.equal(missing.error?.code, -32603);
    assert.equal(missing.error.data?.errno, "ENOENT");
    assert.deepEqual(await partials(dir), []);
  });
});

Deno.test("v0 file handles: a replace open at disconnect leaves the target as it was", async () => {
  await withTempDir(async (dir) => {
    const s = await TestServer.start(["--log-level", "off"]);
    const target = join(dir, "keep.txt");
    await writeFile(target, "original");
    await s.call("fs/open", { handleId: "w", path: target, mode: "replace" });
    await s.call("fs/open", { handleId: "n", path: join(dir, "new.txt"), mode: "replace" });
    await s.call("fs/writeBlock", { handleId: "w", offset: 0, chunk: b64("clobbered") });
    assert.equal((await partials(dir)).length, 2);
    const { code } = await s.close();
    assert.equal(code, 0, s.stderr);
    assert.equal(await readFile(target, "utf8"), "original");
    assert.deepEqual(await readdir(dir), ["keep.txt"]);
  });
});
