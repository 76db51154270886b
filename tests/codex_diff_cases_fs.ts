/**
 * The differential test's `fs/*` cases (see tests/codex_diff_fixture.ts):
 * reads, writes, metadata, listings, directories, removal, copies,
 * canonical paths, symlinks with and without `followSymlinks`, missing
 * paths and `fs/watchMissing`.
 */
import * as fsp from "node:fs/promises";
import { join } from "node:path";
import type { CaseCtx, DiffCase } from "./codex_diff_fixture.ts";
import { b64, type Msg } from "./harness.ts";

/** file.txt, dir/inner.txt, dir/sub/, empty/, and links to a file, a directory and nowhere. */
export async function basicTree(tree: string): Promise<void> {
  await fsp.mkdir(join(tree, "dir/sub"), { recursive: true });
  await fsp.mkdir(join(tree, "empty"));
  await fsp.writeFile(join(tree, "file.txt"), "hello");
  await fsp.writeFile(join(tree, "dir/inner.txt"), "inner");
  await fsp.symlink("file.txt", join(tree, "link_file"));
  await fsp.symlink("dir", join(tree, "link_dir"));
  await fsp.symlink("nowhere", join(tree, "dangling"));
}

/** The metadata fields that do not depend on when the tree was made. */
const META = ["result.isDirectory", "result.isFile", "result.isSymlink", "result.size"];

/** A request per path, labelled by the path. */
async function each(
  c: CaseCtx,
  method: string,
  paths: string[],
  params: (path: string) => Msg,
  exact?: string[] | true,
): Promise<void> {
  for (const path of paths) await c.req(`${method} ${path}`, method, params(path), exact);
}

const readFile: DiffCase = {
  name: "fs/readFile",
  setup: basicTree,
  async run(c) {
    const paths = ["file.txt", "link_file", "link_dir/inner.txt", "dir", "missing", "dangling"];
    await each(c, "fs/readFile", paths, (p) => ({ path: c.u(p), sandbox: null }), ["result"]);
    const noFollow = ["file.txt", "link_file", "link_dir/inner.txt", "dangling", "dir"];
    for (const p of noFollow) {
      await c.req(`no-follow ${p}`, "fs/readFile", {
        path: c.u(p),
        followSymlinks: false,
        sandbox: null,
      });
    }
    await c.req("plain path", "fs/readFile", { path: c.p("file.txt") });
    await c.req("relative uri", "fs/readFile", { path: "file:file.txt" });
    await c.req("no path", "fs/readFile", {});
    await c.req("path not a string", "fs/readFile", { path: 7 });
    await c.req("no params", "fs/readFile");
    await c.req("followSymlinks not a boolean", "fs/readFile", {
      path: c.u("file.txt"),
      followSymlinks: "yes",
    });
  },
};

const writeFile: DiffCase = {
  name: "fs/writeFile",
  setup: basicTree,
  async run(c) {
    const write = (label: string, path: string, extra: Msg = {}) =>
      c.req(label, "fs/writeFile", { path: c.u(path), dataBase64: b64(label), ...extra });
    await write("new file", "new.txt");
    await write("overwrite", "file.txt");
    await write("through a file link", "link_file");
    await write("through a dangling link", "dangling");
    await write("missing parent", "nope/x.txt");
    await write("a directory", "dir");
    await write("empty data", "empty.txt", { dataBase64: "" });
    await write("bad base64", "bad.txt", { dataBase64: "%%%" });
    await write("no data", "nodata.txt", { dataBase64: undefined });
    await write("no-follow plain", "nf.txt", { followSymlinks: false });
    await write("no-follow link", "link_file", { followSymlinks: false });
    await write("no-follow through dir link", "link_dir/x.txt", { followSymlinks: false });
    await c.req("read back", "fs/readFile", { path: c.u("new.txt") }, true);
  },
};

const getMetadata: DiffCase = {
  name: "fs/getMetadata",
  setup: basicTree,
  async run(c) {
    const paths = ["file.txt", "dir", "link_file", "link_dir", "dangling", "missing", "empty"];
    await each(c, "fs/getMetadata", paths, (p) => ({ path: c.u(p), sandbox: null }), META);
    for (const p of ["file.txt", "link_file", "link_dir", "link_dir/inner.txt", "dangling"]) {
      const params = { path: c.u(p), followSymlinks: false, sandbox: null };
      await c.req(`no-follow ${p}`, "fs/getMetadata", params, META);
    }
    await c.req("no path", "fs/getMetadata", { sandbox: null });
  },
};

/** A readDirectory answer with its entries sorted by name. */
function sortedEntries(answer: Msg): Msg {
  const entries = answer.result?.entries;
  if (!Array.isArray(entries)) return answer;
  const sorted = [...entries].sort((a, b) => a.fileName < b.fileName ? -1 : 1);
  return { result: { ...answer.result, entries: sorted } };
}

const readDirectory: DiffCase = {
  name: "fs/readDirectory",
  setup: basicTree,
  async run(c) {
    for (const p of ["", "dir", "link_dir", "empty", "file.txt", "missing", "dangling"]) {
      const answer = await c.server.request("fs/readDirectory", { path: c.u(p), sandbox: null });
      const { id: _id, ...rest } = answer;
      c.record(`readDirectory ${p}`, sortedEntries(rest), ["result"]);
    }
  },
};

const createDirectory: DiffCase = {
  name: "fs/createDirectory",
  setup: basicTree,
  async run(c) {
    const mk = (label: string, path: string, extra: Msg = {}) =>
      c.req(label, "fs/createDirectory", { path: c.u(path), sandbox: null, ...extra });
    await mk("new", "new1", { recursive: false });
    await mk("nested recursive", "a/b/c", { recursive: true });
    await mk("nested not recursive", "x/y/z", { recursive: false });
    await mk("existing recursive", "dir", { recursive: true });
    await mk("existing not recursive", "dir", { recursive: false });
    await mk("over a file", "file.txt", { recursive: true });
    await mk("below a file", "file.txt/sub", { recursive: true });
    await mk("recursive absent", "deflt/a");
    await mk("through a dir link", "link_dir/made", { recursive: true });
    await mk("no-follow through a dir link", "link_dir/nf", {
      recursive: true,
      followSymlinks: false,
    });
    await mk("no-follow a link itself", "link_dir", { recursive: false, followSymlinks: false });
    await mk("recursive not a boolean", "bad", { recursive: "yes" });
  },
};

const remove: DiffCase = {
  name: "fs/remove",
  async setup(tree) {
    await basicTree(tree);
    await fsp.mkdir(join(tree, "full/deep"), { recursive: true });
    await fsp.writeFile(join(tree, "full/deep/f"), "f");
    await fsp.writeFile(join(tree, "gone.txt"), "g");
  },
  async run(c) {
    const rm = (label: string, path: string, recursive: unknown, force: unknown, extra = {}) =>
      c.req(label, "fs/remove", { path: c.u(path), recursive, force, sandbox: null, ...extra });
    await rm("a file", "gone.txt", false, false);
    await rm("a non-empty dir, not recursive", "dir", false, false);
    await rm("an empty dir, not recursive", "empty", false, false);
    await rm("a tree, recursive", "full", true, false);
    await rm("missing, not forced", "missing", false, false);
    await rm("missing, forced", "missing", false, true);
    await rm("a file link (the link goes)", "link_file", false, false);
    await rm("a dir link, recursive", "link_dir", true, false);
    await rm("a dangling link", "dangling", false, false);
    await rm("below a file", "file.txt/x", false, true);
    await rm("defaults", "dir/sub", undefined, undefined);
    await rm("no-follow recursive", "dir", true, false, { followSymlinks: false });
    await rm("no-follow file", "dir/inner.txt", false, false, { followSymlinks: false });
  },
};

const copy: DiffCase = {
  name: "fs/copy",
  async setup(tree) {
    await basicTree(tree);
    await fsp.mkdir(join(tree, "linky/in"), { recursive: true });
    await fsp.writeFile(join(tree, "linky/in/f"), "f");
    await fsp.symlink("in/f", join(tree, "linky/to_file"));
    await fsp.symlink("in", join(tree, "linky/to_dir"));
    await fsp.symlink("gone", join(tree, "linky/dangling"));
  },
  async run(c) {
    const cp = (label: string, from: string, to: string, recursive: unknown) =>
      c.req(label, "fs/copy", {
        sourcePath: c.u(from),
        destinationPath: c.u(to),
        recursive,
        sandbox: null,
      });
    await cp("a file", "file.txt", "copy.txt", false);
    await cp("onto an existing file", "dir/inner.txt", "copy.txt", false);
    await cp("a dir, not recursive", "dir", "dircopy1", false);
    await cp("a dir, recursive", "dir", "dircopy2", true);
    await cp("a missing source", "missing", "m.txt", false);
    await cp("into a missing parent", "file.txt", "nope/c.txt", false);
    await cp("a file link", "link_file", "lcopy.txt", false);
    await cp("a tree with links", "linky", "linkycopy", true);
    await cp("a dir into itself", "dir", "dir/sub/again", true);
    await cp("a dir link, recursive", "link_dir", "ldcopy", true);
    await cp("a dangling link", "dangling", "dcopy", false);
    await cp("onto itself", "file.txt", "file.txt", false);
    await cp("recursive absent", "file.txt", "copy2.txt", undefined);
  },
};

const canonicalize: DiffCase = {
  name: "fs/canonicalize",
  setup: basicTree,
  async run(c) {
    const paths = ["file.txt", "link_dir/inner.txt", "dir/../file.txt", "link_dir", "missing"];
    await each(c, "fs/canonicalize", paths, (p) => ({ path: c.u(p) }), ["result"]);
    await c.req("dangling", "fs/canonicalize", { path: c.u("dangling") });
    await c.req("no path", "fs/canonicalize", {});
  },
};

const watchMissing: DiffCase = {
  name: "fs/watchMissing",
  setup: basicTree,
  async run(c) {
    const watch = (label: string, params: Msg) =>
      c.req(label, "fs/watchMissing", params, ["result"]);
    await watch("bad watchId", { watchId: -1, missing: [] });
    await watch("missing not an array", { watchId: 1, missing: "x" });
    await watch("empty list", { watchId: 2, missing: [], present: null });
    await watch("an existing path", { watchId: 3, missing: [c.u("file.txt")], present: null });
    await watch("watch", { watchId: 10, missing: [c.u("later/AGENTS.md")], present: c.u("dir") });
    await watch("a lower id", { watchId: 5, missing: [c.u("other")], present: null });
    await fsp.mkdir(c.p("later"));
    const note = await c.waitFor(
      (m) => m.method === "fs/missingChanged" && m.params?.watchId === 10,
      "fs/missingChanged",
    );
    c.record("fs/missingChanged", note, true);
  },
};

/** The `fs/*` cases but fs/walk and file handles. */
export const FS_CASES: DiffCase[] = [
  readFile,
  writeFile,
  getMetadata,
  readDirectory,
  createDirectory,
  remove,
  copy,
  canonicalize,
  watchMissing,
];
