/**
 * The differential test's `fs/walk` and file-handle cases (`fs/open`,
 * `fs/readBlock`, `fs/writeBlock`, `fs/close`); see
 * tests/codex_diff_fixture.ts.
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import * as fsp from "node:fs/promises";
import { join } from "node:path";
import type { CaseCtx, DiffCase } from "./codex_diff_fixture.ts";
import { b64, type Msg } from "./harness.ts";

const MIB = 1024 * 1024;

/** `n` pseudo-random bytes, the same on every run (xorshift32). */
export function pseudoRandom(n: number, seed = 0x9e3779b9): Uint8Array {
  const words = new Uint32Array(Math.ceil(n / 4));
  let x = seed >>> 0;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    words[i] = x;
  }
  return new Uint8Array(words.buffer, 0, n);
}

const sha = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** The CLI's skill walk options. */
const CLI_WALK = {
  maxDepth: 6,
  maxDirectories: 2000,
  maxEntries: 20000,
  followDirectorySymlinks: true,
  pruneHiddenDirectories: true,
};

/** Nested and hidden directories, links to a directory, a file, nowhere and upwards. */
async function walkTree(tree: string): Promise<void> {
  for (const d of ["a/b/c/d", ".hid/x", "skills/foo", "b"]) {
    await fsp.mkdir(join(tree, d), { recursive: true });
  }
  for (const f of ["top.txt", "a/f1", "a/b/f2", "a/b/c/d/f4", ".hid/x/h", "skills/foo/SKILL.md"]) {
    await fsp.writeFile(join(tree, f), f);
  }
  await fsp.symlink("a/b", join(tree, "ldir"));
  await fsp.symlink("top.txt", join(tree, "lfile"));
  await fsp.symlink("nowhere", join(tree, "dangling"));
  await fsp.symlink("..", join(tree, "a/up"));
  await fsp.symlink("../a", join(tree, "b/again"));
}

const walk: DiffCase = {
  name: "fs/walk",
  setup: walkTree,
  async run(c) {
    const w = (label: string, options: unknown, path = "", exact: true | string[] = ["result"]) =>
      c.req(label, "fs/walk", { path: c.u(path), options, sandbox: null }, exact);
    const all = { maxDepth: 64, maxDirectories: 10_000, maxEntries: 50_000 };
    await w("as the CLI walks", CLI_WALK);
    await w("no follow, no prune", { ...all, followDirectorySymlinks: false });
    await w("follow, no prune", { ...all, followDirectorySymlinks: true });
    await w("prune, no follow", {
      ...all,
      followDirectorySymlinks: false,
      pruneHiddenDirectories: true,
    });
    await w("maxDepth 0", { ...CLI_WALK, maxDepth: 0 });
    await w("maxDepth 1", { ...CLI_WALK, maxDepth: 1 });
    await w("maxDirectories 0", { ...CLI_WALK, maxDirectories: 0 });
    await w("maxDirectories 2", { ...CLI_WALK, maxDirectories: 2 });
    await w("maxEntries 0", { ...CLI_WALK, maxEntries: 0 });
    await w("maxEntries 3", { ...CLI_WALK, maxEntries: 3 });
    await w("maxDepth over max", { ...CLI_WALK, maxDepth: 65 });
    await w("maxDirectories over max", { ...CLI_WALK, maxDirectories: 10_001 });
    await w("maxEntries over max", { ...CLI_WALK, maxEntries: 50_001 });
    await w("limits at max", {
      ...all,
      followDirectorySymlinks: true,
      pruneHiddenDirectories: true,
    });
    for (const key of Object.keys(CLI_WALK)) {
      const { [key as keyof typeof CLI_WALK]: _gone, ...rest } = CLI_WALK;
      await w(`without ${key}`, rest);
    }
    await w("no options", undefined);
    await w("a negative limit", { ...CLI_WALK, maxDepth: -1 });
    await w("a file", CLI_WALK, "top.txt");
    await w("a missing path", CLI_WALK, "missing");
    await w("a dir link", CLI_WALK, "ldir");
    await w("a dangling link", CLI_WALK, "dangling");
    await c.req("no path", "fs/walk", { options: CLI_WALK, sandbox: null });
  },
};

/** Read a whole file through a handle in 1 MiB blocks: hash, block count, eof flags. */
async function readThrough(c: CaseCtx, label: string, handleId: string, path: string) {
  await c.req(`${label}: open`, "fs/open", { handleId, path: c.u(path), mode: "read" }, true);
  const parts: Uint8Array[] = [];
  const eofs: boolean[] = [];
  for (let offset = 0; eofs.at(-1) !== true && parts.length < 20; offset += MIB) {
    const r = await c.server.request("fs/readBlock", { handleId, offset, len: MIB });
    if (r.error) {
      c.record(`${label}: readBlock error`, r);
      break;
    }
    parts.push(Buffer.from(r.result.chunk, "base64"));
    eofs.push(r.result.eof);
  }
  const bytes = Buffer.concat(parts);
  c.record(`${label}: bytes`, { size: bytes.byteLength, sha: sha(bytes), eofs }, true);
  await c.req(`${label}: close`, "fs/close", { handleId }, true);
}

const BIG = pseudoRandom(5 * MIB);

const bigFile: DiffCase = {
  name: "fs/open big file",
  async setup(tree) {
    await fsp.writeFile(join(tree, "big.bin"), BIG);
  },
  async run(c) {
    c.record("expected", { size: BIG.byteLength, sha: sha(BIG) });
    await readThrough(c, "read", "r1", "big.bin");
    await c.req("open replace", "fs/open", {
      handleId: "w1",
      path: c.u("copy.bin"),
      mode: "replace",
    });
    await c.disk("after open");
    // Out of order: the last block first, then the others.
    const offsets = [4, 0, 1, 2, 3].map((i) => i * MIB);
    for (const offset of offsets) {
      await c.req(`writeBlock ${offset}`, "fs/writeBlock", {
        handleId: "w1",
        offset,
        chunk: b64(BIG.subarray(offset, offset + MIB)),
      }, true);
    }
    await c.disk("before close");
    await c.req("close replace", "fs/close", { handleId: "w1" }, true);
    await readThrough(c, "read back", "r2", "copy.bin");
  },
};

/** Refusals and edges of the four handle methods. */
async function handleEdges(c: CaseCtx): Promise<void> {
  const open = (label: string, params: Msg) => c.req(label, "fs/open", params, ["result"]);
  const read = (label: string, params: Msg) => c.req(label, "fs/readBlock", params, ["result"]);
  await open("open", { handleId: "h", path: c.u("small.txt") });
  await open("duplicate id", { handleId: "h", path: c.u("small.txt") });
  await open("id of 32 bytes", { handleId: "x".repeat(32), path: c.u("small.txt") });
  await open("id over 32 bytes", { handleId: "x".repeat(33), path: c.u("small.txt") });
  await open("id not a string", { handleId: 1, path: c.u("small.txt") });
  await open("missing file", { handleId: "m", path: c.u("missing") });
  await open("a directory", { handleId: "d", path: c.u("sub") });
  await open("bad mode", { handleId: "b", path: c.u("small.txt"), mode: "append" });
  await open("replace in a missing dir", { handleId: "r", path: c.u("nope/x"), mode: "replace" });
  await read("len 0", { handleId: "h", offset: 0, len: 0 });
  await read("len over 1 MiB", { handleId: "h", offset: 0, len: MIB + 1 });
  await read("len 1 MiB", { handleId: "h", offset: 0, len: MIB });
  await read("past the end", { handleId: "h", offset: 100, len: 10 });
  await read("exactly to the end", { handleId: "h", offset: 6, len: 5 });
  await read("negative offset", { handleId: "h", offset: -1, len: 10 });
  await read("unknown handle", { handleId: "zz", offset: 0, len: 10 });
  const write = (label: string, params: Msg) => c.req(label, "fs/writeBlock", params, ["result"]);
  await write("write to a read handle", { handleId: "h", offset: 0, chunk: b64("x") });
  await read("read after the refused write", { handleId: "h", offset: 0, len: 5 });
  await write("write to an unknown handle", { handleId: "zz", offset: 0, chunk: b64("x") });
  await c.req("close", "fs/close", { handleId: "h" }, ["result"]);
  await c.req("close again", "fs/close", { handleId: "h" }, ["result"]);
  await read("read after close", { handleId: "h", offset: 0, len: 10 });
}

/** `replace` handles: blocks, a gap, `eof`, a refused read, one abandoned. */
async function replaceHandles(c: CaseCtx): Promise<void> {
  const open = (label: string, handleId: string, path: string) =>
    c.req(label, "fs/open", { handleId, path: c.u(path), mode: "replace" }, ["result"]);
  const write = (label: string, params: Msg) => c.req(label, "fs/writeBlock", params, ["result"]);
  const close = (label: string, handleId: string) =>
    c.req(label, "fs/close", { handleId }, ["result"]);
  await open("replace", "w", "small.txt");
  await c.disk("after open replace of an existing file");
  await write("empty chunk", { handleId: "w", offset: 0, chunk: "" });
  await write("chunk over 1 MiB", {
    handleId: "w",
    offset: 0,
    chunk: b64(new Uint8Array(MIB + 1)),
  });
  await write("bad base64", { handleId: "w", offset: 0, chunk: "%%%" });
  await write("a gap", { handleId: "w", offset: 4, chunk: b64("tail") });
  await close("close replace", "w");
  await c.req("read the gap back", "fs/readFile", { path: c.u("small.txt") }, ["result"]);
  await open("replace with eof", "e", "eof.txt");
  await write("eof block", { handleId: "e", offset: 0, chunk: b64("head"), eof: true });
  await write("after eof", { handleId: "e", offset: 4, chunk: b64("more") });
  await close("close eof", "e");
  await c.req("read eof.txt", "fs/readFile", { path: c.u("eof.txt") }, ["result"]);
  await open("replace 2", "w2", "second.txt");
  const read = { handleId: "w2", offset: 0, len: 10 };
  await c.req("read a replace handle", "fs/readBlock", read, ["result"]);
  await write("write after the refused read", { handleId: "w2", offset: 0, chunk: b64("2") });
  await close("close replace 2", "w2");
  await open("abandoned", "a", "abandoned.txt");
  await write("abandoned block", { handleId: "a", offset: 0, chunk: b64("partial") });
}

const handles: DiffCase = {
  name: "fs/open edges",
  async setup(tree) {
    await fsp.writeFile(join(tree, "small.txt"), "hello world");
    await fsp.mkdir(join(tree, "sub"));
  },
  run: handleEdges,
};

const replace: DiffCase = {
  name: "fs/open replace",
  async setup(tree) {
    await fsp.writeFile(join(tree, "small.txt"), "hello world");
  },
  run: replaceHandles,
};

/** The file-handle limit: 128 open handles per session, then a refusal. */
const handleLimit: DiffCase = {
  name: "fs/open limit",
  async setup(tree) {
    await fsp.writeFile(join(tree, "f"), "f");
  },
  async run(c) {
    const opens = [];
    for (let i = 0; i < 128; i++) {
      opens.push(c.server.request("fs/open", { handleId: `l${i}`, path: c.u("f") }));
    }
    const codes = (await Promise.all(opens)).map((a) => a.error?.code ?? "ok");
    c.record("128 opens at once", { ok: codes.filter((x) => x === "ok").length }, true);
    await c.req("the 129th", "fs/open", { handleId: "l128", path: c.u("f") }, ["error.code"]);
    await c.req("closing one makes room", "fs/close", { handleId: "l0" }, ["result"]);
    await c.req("then an open", "fs/open", { handleId: "l0", path: c.u("f") }, ["result"]);
    for (let i = 0; i < 129; i++) await c.server.request("fs/close", { handleId: `l${i}` });
  },
};

/** fs/walk and the file-handle cases. */
export const HANDLE_CASES: DiffCase[] = [walk, bigFile, handles, replace, handleLimit];
