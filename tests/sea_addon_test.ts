/**
 * Where the single executable puts node-pty's addon: the per-user cache,
 * reuse and repair of a cached copy, and the temporary fallback.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import process from "node:process";
import {
  addonCacheDir,
  addonChecksum,
  AddonExtractionError,
  type AddonPlaceOptions,
  cacheAddon,
  loadEmbeddedAddon,
} from "../scripts/sea_addon.ts";
import { withTempDir } from "./server_helpers.ts";

const BYTES = new TextEncoder().encode("\x7fELF pretend shared object");
const SHA = addonChecksum(BYTES);

/** Run `fn` with fresh `home` and `tmp` dirs in a temp dir `root`, removed afterwards. */
function withDirs(
  fn: (opts: AddonPlaceOptions, root: string) => Promise<void> | void,
): Promise<void> {
  return withTempDir(async (root) => {
    const home = join(root, "home");
    const tmp = join(root, "tmp");
    mkdirSync(home);
    mkdirSync(tmp);
    await fn({ version: "9.8.7", home, tmp, uid: process.getuid?.() }, root);
  }, "sea-addon-test-");
}

Deno.test("addonCacheDir: ~/.cache unless XDG_CACHE_HOME is absolute", () => {
  const base = { version: "1.2.3", home: "/home/u", tmp: "/tmp" };
  const leaf = `1.2.3-${SHA.slice(0, 16)}`;
  assert.equal(addonCacheDir(SHA, base), `/home/u/.cache/exec-server/${leaf}`);
  assert.equal(
    addonCacheDir(SHA, { ...base, xdgCacheHome: "/var/cache/u" }),
    `/var/cache/u/exec-server/${leaf}`,
  );
  assert.equal(
    addonCacheDir(SHA, { ...base, xdgCacheHome: "relative/cache" }),
    `/home/u/.cache/exec-server/${leaf}`,
  );
});

Deno.test("cacheAddon: writes a private copy once and reuses it", () =>
  withDirs((opts) => {
    const path = cacheAddon(BYTES, SHA, opts);
    assert.equal(path, join(addonCacheDir(SHA, opts), "pty.node"));
    assert.deepEqual(new Uint8Array(readFileSync(path)), BYTES);
    assert.equal(statSync(dirname(path)).mode & 0o777, 0o700);
    assert.equal(statSync(path).mode & 0o077, 0);
    const before = statSync(path);
    assert.equal(cacheAddon(BYTES, SHA, opts), path);
    const after = statSync(path);
    assert.equal(after.ino, before.ino, "an intact cached copy was rewritten");
    // No temporary siblings are left behind.
    assert.deepEqual(readdirSync(dirname(path)), ["pty.node"]);
  }));

Deno.test("cacheAddon: a damaged cached copy is replaced", () =>
  withDirs(async (opts) => {
    const path = cacheAddon(BYTES, SHA, opts);
    await writeFile(path, "truncated");
    assert.equal(cacheAddon(BYTES, SHA, opts), path);
    assert.deepEqual(new Uint8Array(readFileSync(path)), BYTES);
  }));

Deno.test("cacheAddon: refuses a cache directory others can write or someone else owns", () =>
  withDirs((opts) => {
    const dir = addonCacheDir(SHA, opts);
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    assert.throws(() => cacheAddon(BYTES, SHA, opts), /writable by others \(mode 777\)/);
    chmodSync(dir, 0o700);
    const stranger = (opts.uid ?? 0) + 1;
    assert.throws(
      () => cacheAddon(BYTES, SHA, { ...opts, uid: stranger }),
      new RegExp(`not ${stranger}`),
    );
  }));

Deno.test("loadEmbeddedAddon: loads from the cache when it can", () =>
  withDirs((opts) => {
    const loaded: string[] = [];
    const result = loadEmbeddedAddon(BYTES, opts, (path) => {
      loaded.push(path);
      return readFileSync(path, "utf8");
    });
    assert.equal(result, new TextDecoder().decode(BYTES));
    assert.deepEqual(loaded, [join(addonCacheDir(SHA, opts), "pty.node")]);
    assert.deepEqual(readdirSync(opts.tmp), []);
  }));

Deno.test("loadEmbeddedAddon: a home that cannot hold the cache falls back to a temp dir, removed after loading", () =>
  withDirs(async (opts, root) => {
    // A path under a regular file cannot be created, even by root.
    const file = join(root, "file");
    await writeFile(file, "");
    const home = join(file, "home");
    const seen: string[] = [];
    const result = loadEmbeddedAddon(BYTES, { ...opts, home }, (path) => {
      seen.push(path);
      assert.ok(path.startsWith(join(opts.tmp, "exec-server-")), path);
      assert.equal(statSync(dirname(path)).mode & 0o777, 0o700);
      return new Uint8Array(readFileSync(path));
    });
    assert.deepEqual(result, BYTES);
    assert.equal(seen.length, 1);
    assert.equal(existsSync(seen[0]), false);
    assert.deepEqual(readdirSync(opts.tmp), []);
  }));

Deno.test("loadEmbeddedAddon: a cached copy that fails to load (noexec home) falls back too", () =>
  withDirs((opts) => {
    const seen: string[] = [];
    const result = loadEmbeddedAddon(BYTES, opts, (path) => {
      seen.push(path);
      if (path.startsWith(opts.home)) throw new Error("failed to map segment from shared object");
      return "from temp";
    });
    assert.equal(result, "from temp");
    assert.equal(seen.length, 2);
    assert.deepEqual(readdirSync(opts.tmp), []);
  }));

Deno.test("loadEmbeddedAddon: every place failing names each place and reason", () =>
  withDirs(async (opts, root) => {
    const file = join(root, "file");
    await writeFile(file, "");
    try {
      loadEmbeddedAddon(
        BYTES,
        { ...opts, home: join(file, "home"), tmp: join(file, "tmp") },
        () => "unreachable",
      );
      assert.fail("loadEmbeddedAddon succeeded without a writable place");
    } catch (e) {
      assert.ok(e instanceof AddonExtractionError);
      assert.equal(e.attempts.length, 2);
      assert.ok(e.attempts[0].path.startsWith(join(file, "home")));
      assert.ok(e.attempts[1].path.startsWith(join(file, "tmp")));
      assert.match(e.message, /ENOTDIR/);
    }
  }));
