import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import { tmpdir } from "node:os";
import {
  checkAncestors,
  checkDirectoryChain,
  checkNoSymlinks,
  lexicalPath,
  SYMLINK_REFUSED,
} from "./no_symlinks.ts";
import { FileSystemError } from "./types.ts";

/** A real (symlink-free) temp dir with a file, a dir and three links. */
async function withTree(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await fsp.realpath(await fsp.mkdtemp(`${tmpdir()}/no-symlinks-test-`));
  try {
    await fsp.mkdir(`${dir}/dir`);
    await fsp.writeFile(`${dir}/dir/inner.txt`, "inner");
    await fsp.writeFile(`${dir}/file.txt`, "hello");
    await fsp.symlink("file.txt", `${dir}/link_file`);
    await fsp.symlink("dir", `${dir}/link_dir`);
    await fsp.symlink("nowhere", `${dir}/dangling`);
    await fn(dir);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

async function failsWith(
  promise: Promise<unknown>,
  kind: "invalidInput" | "io",
  errno: string,
): Promise<FileSystemError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof FileSystemError, `expected a FileSystemError, got ${err}`);
    assert.equal(err.kind, kind, err.message);
    assert.equal(err.errno, errno, err.message);
    return err;
  }
  assert.fail(`expected ${errno}`);
}

Deno.test("lexicalPath: normalizes without looking at the disk", () => {
  assert.equal(lexicalPath("/a/link/../b/"), "/a/b");
  assert.equal(lexicalPath("/a/./b//c"), "/a/b/c");
  assert.equal(lexicalPath("/"), "/");
  assert.equal(lexicalPath("//"), "/");
});

Deno.test("checkNoSymlinks: following is not checked at all", async () => {
  assert.equal(await checkNoSymlinks("/no/such/path", true), undefined);
});

Deno.test("checkNoSymlinks: real entries answer their lstat, missing ones null", async () => {
  await withTree(async (dir) => {
    assert.ok((await checkNoSymlinks(`${dir}/file.txt`, false))?.isFile());
    assert.ok((await checkNoSymlinks(`${dir}/dir`, false))?.isDirectory());
    assert.ok((await checkNoSymlinks(`${dir}/dir/`, false))?.isDirectory());
    assert.equal(await checkNoSymlinks(`${dir}/missing`, false), null);
    // `..` after a link is resolved lexically: the link is never walked.
    assert.ok((await checkNoSymlinks(`${dir}/link_dir/../file.txt`, false))?.isFile());
    assert.ok((await checkNoSymlinks("/", false))?.isDirectory());
  });
});

Deno.test("checkNoSymlinks: a final symlink fails as the caller asks", async () => {
  await withTree(async (dir) => {
    for (const name of ["link_file", "link_dir", "dangling", "link_dir/"]) {
      const refused = await failsWith(
        checkNoSymlinks(`${dir}/${name}`, false),
        "invalidInput",
        "ELOOP",
      );
      assert.equal(refused.message, SYMLINK_REFUSED);
      const loop = checkNoSymlinks(`${dir}/${name}`, false, {
        op: "readFile",
        finalSymlink: "loop",
      });
      assert.match((await failsWith(loop, "io", "ELOOP")).message, /^readFile /);
      const notDir = checkNoSymlinks(`${dir}/${name}`, false, { finalSymlink: "notDirectory" });
      await failsWith(notDir, "io", "ENOTDIR");
    }
  });
});

Deno.test("checkNoSymlinks: an ancestor that is a symlink or a file is ENOTDIR", async () => {
  await withTree(async (dir) => {
    await failsWith(checkNoSymlinks(`${dir}/link_dir/inner.txt`, false), "io", "ENOTDIR");
    await failsWith(checkNoSymlinks(`${dir}/dangling/x`, false), "io", "ENOTDIR");
    await failsWith(checkNoSymlinks(`${dir}/file.txt/x`, false), "io", "ENOTDIR");
    await failsWith(checkNoSymlinks(`${dir}/missing/x`, false), "io", "ENOENT");
    assert.equal(await checkAncestors(`${dir}/missing/x/y`, "op", "report"), "missing");
    assert.equal(await checkAncestors(`${dir}/dir/inner.txt`), "ok");
  });
});

Deno.test("checkDirectoryChain: every existing component must be a directory", async () => {
  await withTree(async (dir) => {
    await checkDirectoryChain(`${dir}/dir`);
    await checkDirectoryChain(`${dir}/dir/new/deeper`);
    await checkDirectoryChain(`${dir}/missing/a/b`);
    for (const bad of ["link_dir", "link_dir/new", "dangling", "dangling/x", "file.txt"]) {
      await failsWith(checkDirectoryChain(`${dir}/${bad}`), "io", "ENOTDIR");
    }
  });
});
