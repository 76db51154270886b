import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fsp from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import process from "node:process";
import { WALK_MAXIMUMS, type WalkResult } from "../protocol/walk.ts";
import { FileSystemError } from "./types.ts";
import { type ReadGate, type WalkPlan, walkPlan, walkTree } from "./walk.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await fsp.realpath(await fsp.mkdtemp(`${tmpdir()}/fs-walk-test-`));
  try {
    await fn(dir);
  } finally {
    await fsp.chmod(`${dir}`, 0o700).catch(() => {});
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** Make the files (names ending in `/` are directories) below `dir`. */
async function tree(dir: string, paths: string[]): Promise<void> {
  for (const p of paths) {
    if (p.endsWith("/")) await fsp.mkdir(`${dir}/${p}`, { recursive: true });
    else await fsp.writeFile(`${dir}/${p}`, p);
  }
}

/** The entries as `d relative/` and `f relative`, in the walk's order. */
function listed(root: string, result: WalkResult): string[] {
  return result.entries.map((e) =>
    `${e.kind === "directory" ? "d" : "f"} ${e.path.slice(root.length + 1)}`
  );
}

const plan = (options: Partial<WalkPlan> = {}): WalkPlan => walkPlan("walk", "/t", options);

function refusedWith(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof FileSystemError, String(err));
    assert.equal(err.kind, "invalidInput");
    assert.equal(err.errno, "EINVAL");
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("walkPlan: defaults are the maxima, no symlinks followed, hidden directories read", () => {
  assert.deepEqual(walkPlan("walk", "/srv", {}), {
    maxDepth: WALK_MAXIMUMS.depth,
    maxDirectories: WALK_MAXIMUMS.directories,
    maxEntries: WALK_MAXIMUMS.entries,
    followDirectorySymlinks: false,
    pruneHiddenDirectories: false,
  });
  assert.deepEqual(WALK_MAXIMUMS, { depth: 64, directories: 10_000, entries: 50_000 });
  // A depth of 0 reads the root only: allowed, unlike zero directories or entries.
  assert.equal(plan({ maxDepth: 0 }).maxDepth, 0);
  const max = plan({ maxDepth: 64, maxDirectories: 10_000, maxEntries: 50_000 });
  assert.equal(max.maxEntries, 50_000);
});

Deno.test("walkPlan: zero, over-maximum and non-integer limits are EINVAL naming the rule", () => {
  refusedWith(
    () => plan({ maxDirectories: 0 }),
    /^walk \/t: filesystem walk limits must be greater than zero$/,
  );
  refusedWith(() => plan({ maxEntries: 0 }), /greater than zero/);
  const over = /filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000/;
  refusedWith(() => plan({ maxDepth: 65 }), over);
  refusedWith(() => plan({ maxDirectories: 10_001 }), over);
  refusedWith(() => plan({ maxEntries: 50_001 }), over);
  refusedWith(() => plan({ maxDepth: -1 }), /maxDepth must be a non-negative integer, got -1/);
  refusedWith(() => plan({ maxEntries: 1.5 }), /maxEntries must be a non-negative integer/);
});

Deno.test("walkTree: breadth first, each directory by the bytes of its names", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, ["b/c/", "b/c/deep", "a", "B", "é", "_", "b/z", "b/A", "a2/", "a2/x"]);
    const result = await walkTree(dir, plan());
    assert.deepEqual(listed(dir, result), [
      // "B" (0x42) < "_" (0x5f) < "a" < "a2" < "b" < "é" (0xc3 0xa9): bytes, not locale.
      "f B",
      "f _",
      "f a",
      "d a2",
      "d b",
      "f é",
      "f a2/x",
      "f b/A",
      "d b/c",
      "f b/z",
      "f b/c/deep",
    ]);
    assert.deepEqual(result.errors, []);
    assert.equal(result.truncated, false);
  });
});

Deno.test("walkTree: only regular files and directories are listed", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, ["file", "sub/"]);
    execFileSync("mkfifo", [`${dir}/fifo`]);
    const sock = net.createServer();
    await new Promise<void>((resolve) => sock.listen(`${dir}/sock`, resolve));
    try {
      await fsp.symlink("file", `${dir}/file-link`);
      await fsp.symlink("nowhere", `${dir}/dangling`);
      await fsp.symlink("sub", `${dir}/sub-link`);
      assert.deepEqual(listed(dir, await walkTree(dir, plan())), ["f file", "d sub"]);
      // Following directory symlinks lists the one to a directory, still no other kind.
      const followed = await walkTree(dir, plan({ followDirectorySymlinks: true }));
      assert.deepEqual(listed(dir, followed), ["f file", "d sub", "d sub-link"]);
    } finally {
      await new Promise((resolve) => sock.close(resolve));
    }
  });
});

Deno.test("walkTree: a followed directory symlink is read once per real directory", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, ["real/", "real/inner", "other/", "other/o"]);
    await fsp.symlink("real", `${dir}/alias`); // "alias" < "real": reached first
    await fsp.symlink("..", `${dir}/real/up`); // a loop back to the root
    await fsp.symlink(`${dir}/other`, `${dir}/zz-other`);
    const result = await walkTree(dir, plan({ followDirectorySymlinks: true }));
    assert.deepEqual(listed(dir, result), [
      "d alias",
      "d other",
      "d real",
      "d zz-other",
      // Read through the path that reached it first; the others are listed only.
      "f alias/inner",
      "d alias/up",
      "f other/o",
    ]);
    assert.equal(result.truncated, false);
  });
});

Deno.test("walkTree: a symlinked root is walked only when symlinks are followed", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, ["real/", "real/f"]);
    await fsp.symlink("real", `${dir}/link`);
    const root = `${dir}/link`;
    assert.deepEqual(await walkTree(root, plan()), { entries: [], errors: [], truncated: false });
    const followed = await walkTree(root, plan({ followDirectorySymlinks: true }));
    // Paths go through the link, never resolved.
    assert.deepEqual(followed.entries, [{ path: `${root}/f`, kind: "file" }]);
  });
});

Deno.test("walkTree: pruneHiddenDirectories lists hidden directories without reading them", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, [".git/", ".git/config", ".env", "src/", "src/.cache/", "src/.cache/x"]);
    const pruned = await walkTree(dir, plan({ pruneHiddenDirectories: true }));
    assert.deepEqual(listed(dir, pruned), ["f .env", "d .git", "d src", "d src/.cache"]);
    const all = await walkTree(dir, plan());
    assert.deepEqual(listed(dir, all), [
      "f .env",
      "d .git",
      "d src",
      "f .git/config",
      "d src/.cache",
      "f src/.cache/x",
    ]);
  });
});

Deno.test("walkTree: maxDepth reads directories down to it and does not truncate", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, ["top", "d1/", "d1/mid", "d1/d2/", "d1/d2/low"]);
    const zero = await walkTree(dir, plan({ maxDepth: 0 }));
    assert.deepEqual(listed(dir, zero), ["d d1", "f top"]);
    assert.equal(zero.truncated, false, "the depth limit leaves things out without truncating");
    const one = await walkTree(dir, plan({ maxDepth: 1 }));
    assert.deepEqual(listed(dir, one), ["d d1", "f top", "d d1/d2", "f d1/mid"]);
    assert.equal(one.truncated, false);
    const two = await walkTree(dir, plan({ maxDepth: 2 }));
    assert.equal(two.entries.length, 5);
  });
});

Deno.test("walkTree: maxDirectories counts the root, truncates only when one more is due", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, ["a/", "a/in-a", "b/", "b/in-b", "f"]);
    const rootOnly = await walkTree(dir, plan({ maxDirectories: 1 }));
    assert.deepEqual(listed(dir, rootOnly), ["d a", "d b", "f f"]);
    assert.equal(rootOnly.truncated, true);
    const two = await walkTree(dir, plan({ maxDirectories: 2 }));
    assert.deepEqual(listed(dir, two), ["d a", "d b", "f f", "f a/in-a"]);
    assert.equal(two.truncated, true);
    // Exactly enough: nothing was left out.
    const three = await walkTree(dir, plan({ maxDirectories: 3 }));
    assert.equal(three.entries.length, 5);
    assert.equal(three.truncated, false);
  });
});

Deno.test("walkTree: maxEntries truncates only when more entries exist", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, ["a", "b", "c/", "c/d"]);
    const exact = await walkTree(dir, plan({ maxEntries: 4 }));
    assert.equal(exact.entries.length, 4);
    assert.equal(exact.truncated, false);
    const short = await walkTree(dir, plan({ maxEntries: 3 }));
    assert.deepEqual(listed(dir, short), ["f a", "f b", "d c"]);
    assert.equal(short.truncated, true);
    const one = await walkTree(`${dir}/c`, plan({ maxEntries: 1 }));
    assert.deepEqual(one, {
      entries: [{ path: `${dir}/c/d`, kind: "file" }],
      errors: [],
      truncated: false,
    });
  });
});

Deno.test("walkTree: a directory the gate refuses is an error; the walk goes on", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, ["open/", "open/o", "shut/", "shut/secret", "z"]);
    const gate: ReadGate = (real) => real !== `${dir}/shut`;
    const result = await walkTree(dir, plan(), gate);
    assert.deepEqual(listed(dir, result), ["d open", "d shut", "f z", "f open/o"]);
    assert.equal(result.errors.length, 1);
    const [error] = result.errors;
    assert.equal(error.path, `${dir}/shut`);
    assert.equal(error.errno, "EACCES");
    assert.ok(error.message.includes(`${dir}/shut`), error.message);
    assert.equal(result.truncated, false);
    // The gate sees real paths: a followed symlink to the refused directory is refused too.
    await fsp.symlink("shut", `${dir}/via`);
    const followed = await walkTree(dir, plan({ followDirectorySymlinks: true }), gate);
    assert.deepEqual(followed.errors.map((e) => e.path), [`${dir}/shut`]);
  });
});

Deno.test({
  name: "walkTree: an unreadable directory is an error naming it (not as root)",
  // Root reads any directory; the server's black-box tests drop that capability instead.
  ignore: process.getuid?.() === 0,
  fn: async () => {
    await withTempDir(async (dir) => {
      await tree(dir, ["locked/", "locked/x", "ok"]);
      await fsp.chmod(`${dir}/locked`, 0o000);
      try {
        const result = await walkTree(dir, plan());
        assert.deepEqual(listed(dir, result), ["d locked", "f ok"]);
        assert.deepEqual(result.errors.map((e) => [e.path, e.errno]), [[
          `${dir}/locked`,
          "EACCES",
        ]]);
        assert.match(result.errors[0].message, /permission denied/i);
      } finally {
        await fsp.chmod(`${dir}/locked`, 0o700);
      }
    });
  },
});

Deno.test("walkTree: a missing root fails, a file root has no entries", async () => {
  await withTempDir(async (dir) => {
    await tree(dir, ["file"]);
    await assert.rejects(walkTree(`${dir}/missing`, plan()), (err) => {
      assert.ok(err instanceof FileSystemError);
      assert.equal(err.errno, "ENOENT");
      assert.ok(err.message.includes(`${dir}/missing`));
      return true;
    });
    await fsp.symlink("missing", `${dir}/dangling`);
    await assert.rejects(walkTree(`${dir}/dangling`, plan({ followDirectorySymlinks: true })));
    const file = await walkTree(`${dir}/file`, plan());
    assert.deepEqual(file, { entries: [], errors: [], truncated: false });
  });
});
