import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  preparePrivateDir,
  sameSecret,
  SessionDirError,
  sessionSecret,
  sessionSocketPath,
} from "./session_dir.ts";

async function scratch(): Promise<[string, () => Promise<void>]> {
  const dir = await mkdtemp(join(tmpdir(), "session-dir-test-"));
  return [dir, () => rm(dir, { recursive: true, force: true })];
}

Deno.test("preparePrivateDir: made 0700, refused when open, a symlink, or not a directory", async () => {
  const [root, cleanup] = await scratch();
  try {
    const made = join(root, "made");
    await preparePrivateDir(made);
    assert.equal((await stat(made)).mode & 0o777, 0o700);
    await preparePrivateDir(made); // Again: it is there and private.
    const open = join(root, "open");
    await mkdir(open);
    await chmod(open, 0o755);
    await assert.rejects(preparePrivateDir(open), /has mode 755: it must be 700/);
    const link = join(root, "link");
    await symlink(made, link);
    await assert.rejects(preparePrivateDir(link), /is a symbolic link/);
    const file = join(root, "file");
    await writeFile(file, "");
    await assert.rejects(preparePrivateDir(file), (err: Error) => err instanceof SessionDirError);
    await assert.rejects(preparePrivateDir(`/tmp/${"d".repeat(80)}`), /too long for socket paths/);
  } finally {
    await cleanup();
  }
});

Deno.test("sessionSecret: made once, private, the same for every reader", async () => {
  const [dir, cleanup] = await scratch();
  try {
    const [a, b] = await Promise.all([sessionSecret(dir), sessionSecret(dir)]);
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.equal(a, b);
    assert.equal((await stat(join(dir, "secret"))).mode & 0o777, 0o600);
    await chmod(join(dir, "secret"), 0o644);
    await assert.rejects(sessionSecret(dir), /not a private file/);
  } finally {
    await cleanup();
  }
});

Deno.test("sessionSocketPath: one per id, named by a hash that does not show the id", async () => {
  const id = crypto.randomUUID();
  const path = await sessionSocketPath("/d", id);
  assert.equal(path, await sessionSocketPath("/d", id));
  assert.notEqual(path, await sessionSocketPath("/d", crypto.randomUUID()));
  assert.match(path, /^\/d\/s-[0-9a-f]{32}\.sock$/);
  assert.ok(!path.includes(id.slice(0, 8)));
  assert.ok(sameSecret("abc", "abc"));
  assert.ok(!sameSecret("abc", "abd"));
  assert.ok(!sameSecret("abc", "abcd"));
});
