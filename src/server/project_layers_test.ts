import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectDirs, trustedDirs } from "./project_layers.ts";

async function withTree(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "project-layers-"));
  try {
    await mkdir(join(root, "repo/sub/deep"), { recursive: true });
    await fn(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

Deno.test("projectDirs: a .git file or a .git directory with HEAD marks the root", async () => {
  await withTree(async (t) => {
    const deep = join(t, "repo/sub/deep");
    // No repository: the project is cwd alone.
    assert.deepEqual(await projectDirs(deep), { root: deep, dirs: [deep] });
    // An empty .git directory is no repository, as upstream sees it.
    await mkdir(join(t, "repo/.git"));
    assert.deepEqual((await projectDirs(deep)).root, deep);
    await writeFile(join(t, "repo/.git/HEAD"), "ref: refs/heads/main\n");
    const repo = join(t, "repo");
    assert.deepEqual(await projectDirs(deep), {
      root: repo,
      dirs: [repo, join(repo, "sub"), deep],
    });
    assert.deepEqual(await projectDirs(repo), { root: repo, dirs: [repo] });
    await rm(join(t, "repo/.git"), { recursive: true });
    await writeFile(join(t, "repo/.git"), "gitdir: /elsewhere\n");
    assert.equal((await projectDirs(deep)).root, repo);
  });
});

Deno.test("trustedDirs: a directory's own entry, else the project root's", async () => {
  const user = (entries: Record<string, string>) => ({
    projects: Object.fromEntries(
      Object.entries(entries).map(([dir, level]) => [dir, { trust_level: level }]),
    ),
  });
  const dirs = ["/r", "/r/sub", "/r/sub/deep"];
  assert.deepEqual(await trustedDirs(user({ "/r": "trusted" }), "/r", dirs), dirs);
  // Trust of a directory below the root is not inherited by those below it.
  assert.deepEqual(await trustedDirs(user({ "/r/sub": "trusted" }), "/r", dirs), ["/r/sub"]);
  assert.deepEqual(
    await trustedDirs(user({ "/r": "trusted", "/r/sub": "untrusted" }), "/r", dirs),
    ["/r", "/r/sub/deep"],
  );
  assert.deepEqual(await trustedDirs(undefined, "/r", dirs), []);
  assert.deepEqual(await trustedDirs({ projects: "no" }, "/r", dirs), []);
});
