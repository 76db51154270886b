/**
 * `fs/walk` in the Codex CLI's dialect, against the real server: every
 * option required, `file://` URIs in the answer, breadth first by bytes,
 * only files and directories, symlinks, hidden directories, the limits and
 * their refusals, and a directory that cannot be read (as root, with the
 * server's capabilities to read anything dropped by `setpriv`).
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { chmod, mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { type Msg, serverCommand, type TestServer } from "./harness.ts";
import { codexServer, withTempDir } from "./server_helpers.ts";

const uri = (path: string) => pathToFileURL(path).href;

const ALL = { maxDepth: 64, maxDirectories: 10_000, maxEntries: 50_000 };

/** An fs/walk of `path` with every option given (`options` laid over the maxima). */
function walk(s: TestServer, path: string, options: Msg = {}): Promise<Msg> {
  return s.request("fs/walk", {
    path,
    options: { ...ALL, followDirectorySymlinks: false, ...options },
    sandbox: null,
  });
}

/** Entries as `d name/` or `f name` relative to `root`. */
const listed = (root: string, result: Msg): string[] =>
  result.entries.map((e: Msg) =>
    `${e.kind === "directory" ? "d" : "f"} ${
      decodeURIComponent(e.path.slice(uri(root).length + 1))
    }`
  );

/** A tree with a hidden directory, non-ASCII and case-different names, symlinks and a fifo. */
async function fixture(dir: string): Promise<void> {
  for (const d of ["b/c", ".hidden/h", "sub/deep/deeper"]) {
    await mkdir(join(dir, d), { recursive: true });
  }
  for (const f of ["a", "B", "é", "b/c/f", ".hidden/h/x", "sub/deep/deeper/f"]) {
    await writeFile(join(dir, f), f);
  }
  await symlink("b", join(dir, "link-dir"));
  await symlink("a", join(dir, "link-file"));
  await symlink("nowhere", join(dir, "dangling"));
  await symlink("..", join(dir, "b", "up"));
  execFileSync("mkfifo", [join(dir, "fifo")]);
}

Deno.test("codex fs/walk: breadth first by bytes, file URIs, only files and directories", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    await fixture(dir);
    await using s = await codexServer();
    const res = await walk(s, uri(dir));
    assert.deepEqual(Object.keys(res.result).sort(), ["entries", "errors", "truncated"]);
    assert.deepEqual(listed(dir, res.result), [
      "d .hidden",
      "f B",
      "f a",
      "d b",
      "d sub",
      "f é",
      "d .hidden/h",
      "d b/c",
      "d sub/deep",
      "f .hidden/h/x",
      "f b/c/f",
      "d sub/deep/deeper",
      "f sub/deep/deeper/f",
    ]);
    assert.ok(res.result.entries.some((e: Msg) => e.path === `${uri(dir)}/%C3%A9`), "URI-encoded");
    assert.deepEqual(res.result.errors, []);
    assert.equal(res.result.truncated, false);
    // A plain absolute path is accepted as well, and answered with URIs.
    const plain = await walk(s, dir, { maxDepth: 0 });
    assert.deepEqual(listed(dir, plain.result), ["d .hidden", "f B", "f a", "d b", "d sub", "f é"]);
  });
});

Deno.test("codex fs/walk: directory symlinks when asked, once per real directory", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    await fixture(dir);
    await using s = await codexServer();
    const res = await walk(s, uri(dir), { maxDepth: 1, followDirectorySymlinks: true });
    // b is read (it comes first); link-dir, the same directory again, is only listed,
    // and so is b's `up`, which leads back to the root.
    assert.deepEqual(listed(dir, res.result), [
      "d .hidden",
      "f B",
      "f a",
      "d b",
      "d link-dir",
      "d sub",
      "f é",
      "d .hidden/h",
      "d b/c",
      "d b/up",
      "d sub/deep",
    ]);
    // A root that is a symlink is walked through it only when following.
    const root = join(dir, "link-dir");
    assert.deepEqual((await walk(s, uri(root))).result, {
      entries: [],
      errors: [],
      truncated: false,
    });
    const followed = await walk(s, uri(root), { maxDepth: 0, followDirectorySymlinks: true });
    assert.deepEqual(followed.result.entries.map((e: Msg) => e.path), [
      `${uri(root)}/c`,
      `${uri(root)}/up`,
    ]);
  });
});

Deno.test("codex fs/walk: pruneHiddenDirectories lists hidden directories unread", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    await fixture(dir);
    await using s = await codexServer();
    const res = await walk(s, uri(dir), { pruneHiddenDirectories: true });
    const got = listed(dir, res.result);
    assert.ok(got.includes("d .hidden"));
    assert.ok(!got.some((e) => e.includes(".hidden/")), got.join());
    assert.ok(got.includes("f sub/deep/deeper/f"));
  });
});

Deno.test("codex fs/walk: maxDirectories and maxEntries truncate, maxDepth does not", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    await fixture(dir);
    await using s = await codexServer();
    const twoDirs = (await walk(s, uri(dir), { maxDirectories: 2 })).result;
    // The root and .hidden were read; b would have been the third.
    assert.deepEqual(listed(dir, twoDirs).slice(-1), ["d .hidden/h"]);
    assert.equal(twoDirs.entries.length, 7);
    assert.equal(twoDirs.truncated, true);
    const three = (await walk(s, uri(dir), { maxEntries: 3 })).result;
    assert.deepEqual(listed(dir, three), ["d .hidden", "f B", "f a"]);
    assert.equal(three.truncated, true);
    const exact = (await walk(s, uri(join(dir, "b", "c")), { maxEntries: 1 })).result;
    assert.deepEqual(exact, {
      entries: [{ path: uri(join(dir, "b/c/f")), kind: "file" }],
      errors: [],
      truncated: false,
    });
    const shallow = (await walk(s, uri(dir), { maxDepth: 0 })).result;
    assert.equal(shallow.entries.length, 6);
    assert.equal(shallow.truncated, false);
  });
});

Deno.test("codex fs/walk: refusals as upstream answers them", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    await writeFile(join(dir, "file"), "x");
    await using s = await codexServer();
    const zero = await walk(s, uri(dir), { maxDirectories: 0 });
    assert.equal(zero.error?.code, -32600);
    assert.match(zero.error.message, /filesystem walk limits must be greater than zero$/);
    assert.equal((await walk(s, uri(dir), { maxEntries: 0 })).error?.code, -32600);
    const over = await walk(s, uri(dir), { maxDepth: 65 });
    assert.equal(over.error?.code, -32600);
    assert.match(
      over.error.message,
      /filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000$/,
    );
    const { followDirectorySymlinks: _, ...noFollow } = { ...ALL, followDirectorySymlinks: false };
    const missingField = await s.request("fs/walk", { path: uri(dir), options: noFollow });
    assert.equal(missingField.error?.code, -32602);
    assert.match(missingField.error.message, /followDirectorySymlinks/);
    const noOptions = await s.request("fs/walk", { path: uri(dir) });
    assert.equal(noOptions.error?.code, -32602);
    assert.match(noOptions.error.message, /options/);
    const missing = await walk(s, uri(join(dir, "missing")));
    assert.equal(missing.error?.code, -32004);
    assert.equal(missing.error.data?.errno, "ENOENT");
    // A file is a walk with nothing in it.
    assert.deepEqual((await walk(s, uri(join(dir, "file")))).result, {
      entries: [],
      errors: [],
      truncated: false,
    });
    assert.equal((await walk(s, "relative/path")).error?.code, -32602);
  });
});

/** setpriv's way to run the server as root without the right to read anything. */
const NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"];
const root = process.getuid?.() === 0;
const canDropCaps = root && spawnSync(NO_DAC[0], [...NO_DAC.slice(1), "true"]).status === 0;

Deno.test({
  name: "codex fs/walk: a directory that cannot be read is an error; the walk goes on",
  ignore: root && !canDropCaps,
  fn: async () => {
    await withTempDir(async (tmp) => {
      const dir = await realpath(tmp);
      for (const d of ["locked", "open"]) await mkdir(join(dir, d));
      await writeFile(join(dir, "locked", "secret"), "s");
      await writeFile(join(dir, "open", "o"), "o");
      await chmod(join(dir, "locked"), 0o000);
      await using s = await codexServer(root ? { command: [...NO_DAC, ...serverCommand()] } : {});
      const res = (await walk(s, uri(dir))).result;
      assert.deepEqual(listed(dir, res), ["d locked", "d open", "f open/o"]);
      assert.equal(res.errors.length, 1);
      assert.deepEqual(Object.keys(res.errors[0]).sort(), ["message", "path"], "no errno here");
      assert.equal(res.errors[0].path, uri(join(dir, "locked")));
      assert.match(res.errors[0].message, /permission denied/i);
      assert.equal(res.truncated, false);
    });
  },
});
