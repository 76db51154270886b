/**
 * The Codex dialect's `followSymlinks: false` and `fs/watchMissing`, against
 * a real server, as upstream 0.171 answers them (observed side by side:
 * codes, and what is left on disk). See src/server/codex_no_follow.ts and
 * src/server/missing_watch.ts.
 */
import assert from "node:assert/strict";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { tmpdir } from "node:os";
import { b64, type Msg, type TestServer } from "./harness.ts";
import { codexServer } from "./server_helpers.ts";

const NOT_FOUND = -32004;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const INTERNAL = -32603;

/** A symlink-free temp dir: file.txt, dir/inner.txt, dir/sub, and links to each. */
async function tree(): Promise<string> {
  const dir = await fsp.realpath(await fsp.mkdtemp(`${tmpdir()}/codex-symlinks-`));
  await fsp.mkdir(`${dir}/dir/sub`, { recursive: true });
  await fsp.writeFile(`${dir}/file.txt`, "hello");
  await fsp.writeFile(`${dir}/dir/inner.txt`, "inner");
  await fsp.symlink("file.txt", `${dir}/link_file`);
  await fsp.symlink("dir", `${dir}/link_dir`);
  await fsp.symlink("nowhere", `${dir}/dangling`);
  return dir;
}

/** The error code of a request (0 when it succeeded). */
async function code(s: TestServer, method: string, params: Msg): Promise<number> {
  const answer = await s.request(method, { sandbox: null, ...params });
  return answer.error?.code ?? 0;
}

Deno.test("codex followSymlinks: typed on five methods, ignored by the others", async () => {
  await using s = await codexServer();
  const dir = await tree();
  try {
    const uri = (p: string) => `file://${dir}/${p}`;
    const typed: [string, Msg][] = [
      ["fs/readFile", { path: uri("file.txt") }],
      ["fs/writeFile", { path: uri("w.txt"), dataBase64: "" }],
      ["fs/getMetadata", { path: uri("file.txt") }],
      ["fs/createDirectory", { path: uri("newdir") }],
      ["fs/remove", { path: uri("nothing"), recursive: false, force: true }],
    ];
    for (const [method, params] of typed) {
      assert.equal(await code(s, method, { ...params, followSymlinks: "yes" }), INVALID_PARAMS);
      assert.equal(await code(s, method, { ...params, followSymlinks: null }), 0, method);
    }
    const ignored: [string, Msg][] = [
      ["fs/readDirectory", { path: uri("link_dir") }],
      ["fs/canonicalize", { path: uri("link_dir") }],
      ["fs/copy", {
        sourcePath: uri("link_file"),
        destinationPath: uri("c.txt"),
        recursive: false,
      }],
    ];
    for (const [method, params] of ignored) {
      assert.equal(await code(s, method, { ...params, followSymlinks: false }), 0, method);
    }
    assert.equal(readFileSync(`${dir}/c.txt`, "utf8"), "hello", "fs/copy followed the link");
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
});

Deno.test("codex followSymlinks: false refuses links in reads, writes and metadata", async () => {
  await using s = await codexServer();
  const dir = await tree();
  try {
    const uri = (p: string) => `file://${dir}/${p}`;
    const no = { followSymlinks: false };
    // [path, readFile, getMetadata, writeFile]
    const table: [string, number, number, number][] = [
      ["file.txt", 0, 0, 0],
      ["link_file", INTERNAL, INVALID_REQUEST, INTERNAL], // ELOOP; "path contains a symbolic link"
      ["link_dir", INTERNAL, INVALID_REQUEST, INTERNAL],
      ["dangling", INTERNAL, INVALID_REQUEST, INTERNAL],
      ["link_dir/inner.txt", INTERNAL, INTERNAL, INTERNAL], // ENOTDIR
      ["dir", INVALID_REQUEST, 0, INTERNAL], // "path is not a regular file"; EISDIR
      ["missing/x", NOT_FOUND, NOT_FOUND, NOT_FOUND],
    ];
    for (const [path, read, meta, write] of table) {
      assert.equal(await code(s, "fs/readFile", { path: uri(path), ...no }), read, `read ${path}`);
      assert.equal(await code(s, "fs/getMetadata", { path: uri(path), ...no }), meta, path);
      const w = { path: uri(path), dataBase64: b64("NEW"), ...no };
      assert.equal(await code(s, "fs/writeFile", w), write, `write ${path}`);
    }
    assert.equal(readFileSync(`${dir}/file.txt`, "utf8"), "NEW");
    assert.equal(readFileSync(`${dir}/dir/inner.txt`, "utf8"), "inner");
    assert.equal(existsSync(`${dir}/nowhere`), false, "the dangling link was not written through");
    const bad = await s.request("fs/getMetadata", { path: uri("link_dir/"), ...no });
    assert.equal(bad.error.message, "path contains a symbolic link");
    // `..` is resolved lexically, never through the link.
    const up = await s.call("fs/getMetadata", { path: uri("link_dir/../file.txt"), ...no });
    assert.equal(up.isFile, true);
    // By default links are followed: the target is written, the link stays.
    await s.call("fs/writeFile", { path: uri("dangling"), dataBase64: b64("via") });
    assert.equal(readFileSync(`${dir}/nowhere`, "utf8"), "via");
    assert.ok(lstatSync(`${dir}/dangling`).isSymbolicLink());
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
});

Deno.test("codex followSymlinks: false in createDirectory and remove", async () => {
  await using s = await codexServer();
  const dir = await tree();
  try {
    const uri = (p: string) => `file://${dir}/${p}`;
    const mk = (p: string, recursive: boolean) =>
      code(s, "fs/createDirectory", { path: uri(p), recursive, followSymlinks: false });
    assert.equal(await mk("link_dir/new", true), INTERNAL); // ENOTDIR
    assert.equal(await mk("link_dir/new", false), INTERNAL);
    assert.equal(await mk("link_dir", true), INTERNAL);
    assert.equal(await mk("link_dir", false), INTERNAL); // EEXIST
    assert.equal(await mk("file.txt", true), INTERNAL); // ENOTDIR
    assert.equal(await mk("missing/a", false), NOT_FOUND);
    assert.equal(await mk("fresh/a/b", true), 0);
    assert.equal(existsSync(`${dir}/dir/new`), false);
    assert.ok(lstatSync(`${dir}/fresh/a/b`).isDirectory());

    const rm = (p: string, recursive: boolean | null, force = false) =>
      s.request("fs/remove", {
        path: uri(p),
        recursive,
        force,
        followSymlinks: false,
        sandbox: null,
      });
    const recursive = await rm("dir", true);
    assert.equal(recursive.error.code, INTERNAL);
    assert.equal(recursive.error.message, "recursive no-follow removal is unsupported");
    assert.equal((await rm("link_file", null)).error.code, INTERNAL, "recursive by default");
    for (const link of ["link_file", "link_dir", "dangling"]) {
      const refused = await rm(link, false);
      assert.equal(refused.error.code, INVALID_REQUEST, link);
      assert.equal(refused.error.message, "path contains a symbolic link");
    }
    assert.equal((await rm("link_dir/inner.txt", false, true)).error.code, INTERNAL); // ENOTDIR
    assert.equal((await rm("missing/x", false)).error.code, NOT_FOUND);
    assert.equal((await rm("missing/x", false, true)).error, undefined);
    assert.equal((await rm("dir", false)).error.code, INTERNAL); // ENOTEMPTY
    assert.equal((await rm("dir/sub", false)).error, undefined);
    assert.equal((await rm("file.txt", false)).error, undefined);
    for (const kept of ["link_file", "link_dir", "dangling", "dir/inner.txt"]) {
      assert.ok(lstatSync(`${dir}/${kept}`), kept); // Throws when it is gone.
    }
    assert.equal(existsSync(`${dir}/dir/sub`), false);
    assert.equal(existsSync(`${dir}/file.txt`), false);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
});

Deno.test("codex sandbox: a dangling link out of a writable directory is not written through", async () => {
  await using s = await codexServer();
  const dir = await fsp.realpath(await fsp.mkdtemp(`${tmpdir()}/codex-symlinks-sb-`));
  try {
    await fsp.mkdir(`${dir}/proj`);
    await fsp.mkdir(`${dir}/outside`);
    await fsp.symlink("../outside/new.txt", `${dir}/proj/dang`);
    await fsp.symlink("../outside/o.txt", `${dir}/proj/olink`);
    await fsp.writeFile(`${dir}/outside/o.txt`, "out");
    const entry = (kind: string, access: string) => ({
      path: { type: "special", value: { kind } },
      access,
    });
    const sandbox = {
      permissions: {
        type: "managed",
        file_system: {
          type: "restricted",
          entries: [entry("root", "read"), entry("project_roots", "write")],
        },
        network: "restricted",
      },
      cwd: `file://${dir}/proj`,
      workspaceRoots: [`file://${dir}/proj`],
      userHomeDir: `file://${dir}`,
      windowsSandboxLevel: "disabled",
      useLegacyLandlock: false,
    };
    const write = (name: string, extra: Msg = {}) =>
      s.request("fs/writeFile", {
        path: `file://${dir}/proj/${name}`,
        dataBase64: b64("x"),
        sandbox,
        ...extra,
      });
    // Refused: here -32600 with data.sandboxDenied; upstream, which writes
    // from inside its sandbox, -32603 "Read-only file system (os error 30)".
    assert.ok([INVALID_REQUEST, INTERNAL].includes((await write("dang")).error?.code));
    assert.equal(existsSync(`${dir}/outside/new.txt`), false);
    // Without following, the link is refused before the sandbox is asked.
    assert.equal((await write("olink", { followSymlinks: false })).error?.code, INTERNAL);
    assert.equal(readFileSync(`${dir}/outside/o.txt`, "utf8"), "out");
    assert.equal((await write("inside.txt", { followSymlinks: false })).error, undefined);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
});

/** Watch helpers over one server and one temp dir. */
function watcher(s: TestServer, dir: string) {
  const uri = (p: string) => `file://${dir}/${p}`;
  return {
    watch: async (watchId: number, missing: string[], present: string | null = null) =>
      (await s.call("fs/watchMissing", {
        watchId,
        missing: missing.map(uri),
        present: present && uri(present),
        sandbox: null,
      })).watching,
    fired: () => s.messages.filter((m) => m.method === "fs/missingChanged").map((m) => m.params),
  };
}

const settle = () => new Promise((r) => setTimeout(r, 700));

Deno.test("codex fs/watchMissing: params typed as upstream types them", async () => {
  await using s = await codexServer();
  const bad: Msg[] = [
    { watchId: "seven", missing: [] },
    { watchId: -1, missing: [] },
    { watchId: 1.5, missing: [] },
    { missing: [] },
    { watchId: 2 ** 64, missing: [] },
    { watchId: 1, missing: "file:///tmp/x" },
    { watchId: 1 },
    { watchId: 1, missing: [5] },
    { watchId: 1, missing: [], present: ["file:///tmp"] },
  ];
  for (const params of bad) {
    assert.equal((await s.request("fs/watchMissing", params)).error?.code, INVALID_PARAMS);
  }
  assert.equal((await s.request("fs/unwatchMissing", { watchId: 1 })).error?.code, -32601);
});

Deno.test("codex fs/watchMissing: one watch, growing ids, what may be watched", async () => {
  await using s = await codexServer();
  const dir = await tree();
  try {
    const w = watcher(s, dir);
    assert.equal(await w.watch(1, []), false, "nothing to watch");
    assert.equal(await w.watch(2, ["dir"]), false, "already there");
    assert.equal(await w.watch(3, ["dangling"]), false, "a dangling link is there");
    assert.equal(await w.watch(4, ["m"], "nothere"), false, "present is missing");
    assert.equal(await w.watch(5, ["m"], "link_dir"), false, "present is a link");
    assert.equal(await w.watch(6, ["link_dir/AGENTS.md"]), false, "under a link");
    assert.equal(await w.watch(7, ["file.txt/x"]), false, "under a file");
    assert.equal(await w.watch(10, ["m10"]), true);
    assert.equal(await w.watch(10, ["m10b"]), false, "an id seen before");
    assert.equal(await w.watch(9, ["m9"]), false, "a lower id");
    assert.equal(await w.watch(11, ["m11"], "dir"), true, "replaces watch 10");
    await fsp.mkdir(`${dir}/m10`);
    await fsp.mkdir(`${dir}/m9`);
    await settle();
    assert.deepEqual(w.fired(), []);
    await fsp.mkdir(`${dir}/m11`);
    await settle();
    await fsp.rmdir(`${dir}/m11`);
    await fsp.mkdir(`${dir}/m11`);
    await settle();
    assert.deepEqual(w.fired(), [{ watchId: 11 }], "once");
    assert.equal(await w.watch(11, ["m12"]), false, "a fired id stays seen");
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
});

Deno.test("codex fs/watchMissing: fires on an ancestor appearing or present going", async () => {
  await using s = await codexServer();
  const dir = await tree();
  try {
    const w = watcher(s, dir);
    assert.equal(await w.watch(1, ["dir/a/b/AGENTS.md"], "dir/sub"), true);
    await fsp.writeFile(`${dir}/dir/sibling.txt`, "");
    await fsp.writeFile(`${dir}/dir/sub/inside.txt`, "");
    await settle();
    assert.deepEqual(w.fired(), [], "a sibling or a change inside present is no change");
    await fsp.mkdir(`${dir}/dir/a`);
    await settle();
    assert.deepEqual(w.fired(), [{ watchId: 1 }], "the first missing component appeared");
    assert.equal(await w.watch(2, ["dir/AGENTS.md"], "dir/sub"), true);
    await fsp.rm(`${dir}/dir/sub`, { recursive: true });
    await settle();
    assert.deepEqual(w.fired(), [{ watchId: 1 }, { watchId: 2 }], "present went");
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
});
