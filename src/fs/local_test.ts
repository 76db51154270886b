import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fsp from "node:fs/promises";
import { tmpdir } from "node:os";
import { LocalFileSystem } from "./local.ts";
import { FileSystemError } from "./types.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await fsp.mkdtemp(`${tmpdir()}/fs-local-test-`);
  try {
    await fn(dir);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

async function rejectsWith(
  promise: Promise<unknown>,
  kind: "invalidInput" | "io",
  errno: string,
  mentions: string,
): Promise<FileSystemError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof FileSystemError, `expected a FileSystemError, got ${err}`);
    assert.equal(err.errno, errno, err.message);
    assert.equal(err.kind, kind, err.message);
    assert.ok(err.message.includes(mentions), `${JSON.stringify(err.message)} names ${mentions}`);
    return err;
  }
  assert.fail(`expected ${errno}, but the call succeeded`);
}

Deno.test("LocalFileSystem rejects a bad read limit", () => {
  assert.throws(() => new LocalFileSystem({ maxReadFileBytes: -1 }), /maxReadFileBytes.*-1/);
  assert.throws(() => new LocalFileSystem({ maxReadFileBytes: 1.5 }), /1\.5/);
  assert.equal(new LocalFileSystem({ maxReadFileBytes: 7 }).maxReadFileBytes, 7);
});

Deno.test("LocalFileSystem refuses relative paths and accepts file URIs", async () => {
  const fs = new LocalFileSystem();
  await rejectsWith(fs.readFile("relative/file"), "invalidInput", "EINVAL", "relative/file");
  await rejectsWith(fs.getMetadata("file://remote-host/x"), "invalidInput", "EINVAL", "remote");
  await withTempDir(async (dir) => {
    await fs.writeFile(`${dir}/a b`, enc.encode("spaced"));
    const url = new URL(`file://${dir}/a b`).href;
    assert.ok(url.includes("%20"));
    assert.equal(dec.decode(await fs.readFile(url)), "spaced");
  });
});

Deno.test("readFile reads files whose stat size is wrong, within the limit", async () => {
  // /proc files report size 0 but have content.
  const status = dec.decode(await new LocalFileSystem().readFile("/proc/self/status"));
  assert.match(status, /^Name:/);
  const small = new LocalFileSystem({ maxReadFileBytes: 16 });
  await rejectsWith(small.readFile("/proc/self/status"), "invalidInput", "EFBIG", "16 bytes");
});

Deno.test("readFile enforces the limit from stat before reading", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem({ maxReadFileBytes: 10 });
    await fsp.writeFile(`${dir}/ten`, "0123456789");
    await fsp.writeFile(`${dir}/eleven`, "0123456789!");
    assert.equal(dec.decode(await fs.readFile(`${dir}/ten`)), "0123456789");
    const err = await rejectsWith(fs.readFile(`${dir}/eleven`), "invalidInput", "EFBIG", "11");
    assert.equal(err.path, `${dir}/eleven`);
    // A zero limit still reads empty files.
    await fsp.writeFile(`${dir}/empty`, "");
    assert.equal(
      (await new LocalFileSystem({ maxReadFileBytes: 0 }).readFile(`${dir}/empty`)).length,
      0,
    );
  });
});

Deno.test("readFile and writeFile refuse fifos without blocking", async () => {
  await withTempDir(async (dir) => {
    const fifo = `${dir}/pipe`;
    execFileSync("mkfifo", [fifo]);
    const fs = new LocalFileSystem();
    await rejectsWith(fs.readFile(fifo), "invalidInput", "EINVAL", "fifo");
    await rejectsWith(fs.writeFile(fifo, enc.encode("x")), "invalidInput", "EINVAL", "fifo");
    await rejectsWith(fs.readFile(dir), "io", "EISDIR", dir);
    await rejectsWith(fs.writeFile(dir, enc.encode("x")), "io", "EISDIR", dir);
    await rejectsWith(fs.writeFile(`${dir}/new/`, enc.encode("x")), "io", "EISDIR", "new/");
  });
});

Deno.test("writeFile preserves mode, writes through symlinks, leaves no temp files", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    const file = `${dir}/script.sh`;
    await fsp.writeFile(file, "old content that is longer");
    await fsp.chmod(file, 0o751);
    await fs.writeFile(file, enc.encode("new"));
    assert.equal(await fsp.readFile(file, "utf8"), "new");
    assert.equal((await fsp.stat(file)).mode & 0o7777, 0o751);

    await fsp.symlink("script.sh", `${dir}/link`);
    await fs.writeFile(`${dir}/link`, enc.encode("via link"));
    assert.equal(await fsp.readlink(`${dir}/link`), "script.sh");
    assert.equal(await fsp.readFile(file, "utf8"), "via link");

    // A dangling link creates the file it points to.
    await fsp.symlink("target.txt", `${dir}/dangling`);
    await fs.writeFile(`${dir}/dangling`, enc.encode("created"));
    assert.equal(await fsp.readFile(`${dir}/target.txt`, "utf8"), "created");
    assert.equal(await fsp.readlink(`${dir}/dangling`), "target.txt");

    // A symlink loop is reported, not followed forever.
    await fsp.symlink("loop-b", `${dir}/loop-a`);
    await fsp.symlink("loop-a", `${dir}/loop-b`);
    await rejectsWith(fs.writeFile(`${dir}/loop-a`, enc.encode("x")), "io", "ELOOP", "loop-a");

    await rejectsWith(fs.writeFile(`${dir}/missing/f`, enc.encode("x")), "io", "ENOENT", "missing");
    const names = (await fsp.readdir(dir)).sort();
    assert.deepEqual(names, ["dangling", "link", "loop-a", "loop-b", "script.sh", "target.txt"]);
  });
});

Deno.test("writeFile gives a new file the default mode", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    await fs.writeFile(`${dir}/fresh`, enc.encode(""));
    const umask = Number.parseInt(execFileSync("sh", ["-c", "umask"], { encoding: "utf8" }), 8);
    assert.equal((await fsp.stat(`${dir}/fresh`)).mode & 0o777, 0o666 & ~umask);
  });
});

Deno.test("copy refuses a hard link to itself instead of truncating it", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    await fsp.writeFile(`${dir}/a`, "precious");
    await fsp.link(`${dir}/a`, `${dir}/b`);
    await rejectsWith(fs.copy(`${dir}/a`, `${dir}/b`), "invalidInput", "EINVAL", "same file");
    await rejectsWith(fs.copy(`${dir}/a`, `${dir}/a`), "invalidInput", "EINVAL", "same file");
    assert.equal(await fsp.readFile(`${dir}/a`, "utf8"), "precious");
  });
});

Deno.test("copy of a read-only tree keeps modes and merges into an existing directory", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    await fsp.mkdir(`${dir}/src/inner`, { recursive: true });
    await fsp.writeFile(`${dir}/src/inner/f`, "f");
    await fsp.chmod(`${dir}/src/inner/f`, 0o640);
    await fsp.chmod(`${dir}/src/inner`, 0o555);
    await fsp.mkdir(`${dir}/dst`);
    await fsp.writeFile(`${dir}/dst/keep`, "kept");
    try {
      await fs.copy(`${dir}/src`, `${dir}/dst`, { recursive: true });
      assert.equal(await fsp.readFile(`${dir}/dst/inner/f`, "utf8"), "f");
      assert.equal(await fsp.readFile(`${dir}/dst/keep`, "utf8"), "kept");
      assert.equal((await fsp.stat(`${dir}/dst/inner`)).mode & 0o7777, 0o555);
      assert.equal((await fsp.stat(`${dir}/dst/inner/f`)).mode & 0o7777, 0o640);
    } finally {
      await fsp.chmod(`${dir}/src/inner`, 0o755);
      await fsp.chmod(`${dir}/dst/inner`, 0o755).catch(() => {});
    }
  });
});

Deno.test("copy merges only into real directories, never through a symlink", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    const src = `${dir}/src`;
    await fsp.mkdir(`${src}/sub`, { recursive: true });
    await fsp.writeFile(`${src}/a.txt`, "src a");
    await fsp.writeFile(`${src}/sub/a.txt`, "src sub/a");
    await fsp.mkdir(`${dir}/elsewhere`);
    await fsp.writeFile(`${dir}/elsewhere/a.txt`, "elsewhere a");
    const listing = async (): Promise<Record<string, string>> => {
      const out: Record<string, string> = {};
      for (const d of [src, `${src}/sub`, `${dir}/elsewhere`]) {
        for (const name of (await fsp.readdir(d)).sort()) {
          const st = await fsp.lstat(`${d}/${name}`);
          out[`${d}/${name}`] = st.isFile() ? await fsp.readFile(`${d}/${name}`, "utf8") : "dir";
        }
      }
      return out;
    };
    const before = await listing();

    // dst/sub -> src: merging src/sub into it would write into the source
    // (src/a.txt was overwritten with src/sub/a.txt).
    await fsp.mkdir(`${dir}/dst`);
    await fsp.symlink(src, `${dir}/dst/sub`);
    const err = await rejectsWith(
      fs.copy(src, `${dir}/dst`, { recursive: true }),
      "io",
      "EEXIST",
      `${dir}/dst/sub`,
    );
    assert.match(err.message, /symlink/);
    assert.equal(err.path, `${dir}/dst/sub`);
    // A link to any other directory, or a file, in the way is refused too.
    await fsp.rm(`${dir}/dst`, { recursive: true });
    await fsp.mkdir(`${dir}/dst`);
    await fsp.symlink(`${dir}/elsewhere`, `${dir}/dst/sub`);
    await rejectsWith(fs.copy(src, `${dir}/dst`, { recursive: true }), "io", "EEXIST", "symlink");
    await fsp.rm(`${dir}/dst/sub`);
    await fsp.writeFile(`${dir}/dst/sub`, "a file");
    await rejectsWith(fs.copy(src, `${dir}/dst`, { recursive: true }), "io", "EEXIST", "file");
    assert.equal(await fsp.readFile(`${dir}/dst/sub`, "utf8"), "a file");
    // The destination itself as a symlink to a directory, like `cp -rT`.
    await fsp.symlink(`${dir}/elsewhere`, `${dir}/dst-link`);
    await rejectsWith(
      fs.copy(src, `${dir}/dst-link`, { recursive: true }),
      "io",
      "EEXIST",
      `${dir}/dst-link`,
    );
    assert.deepEqual(await listing(), before);

    // Named with a trailing slash, the link's directory is what is meant.
    await fs.copy(`${src}/sub`, `${dir}/dst-link/`, { recursive: true });
    assert.equal(await fsp.readFile(`${dir}/elsewhere/a.txt`, "utf8"), "src sub/a");
    // ...but never when it leads back into the source.
    await fsp.symlink(`${src}/sub`, `${dir}/src-link`);
    await rejectsWith(
      fs.copy(src, `${dir}/src-link/`, { recursive: true }),
      "invalidInput",
      "EINVAL",
      "into itself",
    );
    assert.equal(await fsp.readFile(`${src}/a.txt`, "utf8"), "src a");
    assert.equal(await fsp.readFile(`${src}/sub/a.txt`, "utf8"), "src sub/a");
  });
});

Deno.test("a tree copy never writes through a destination file symlink into the source", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    await fsp.mkdir(`${dir}/src`);
    await fsp.writeFile(`${dir}/src/a.txt`, "A");
    await fsp.writeFile(`${dir}/src/b.txt`, "B");
    await fsp.mkdir(`${dir}/dst`);
    // `cp -rT src dst` writes B into src/a.txt here.
    await fsp.symlink(`${dir}/src/a.txt`, `${dir}/dst/b.txt`);
    await rejectsWith(
      fs.copy(`${dir}/src`, `${dir}/dst`, { recursive: true }),
      "invalidInput",
      "EINVAL",
      `${dir}/dst/b.txt`,
    );
    assert.equal(await fsp.readFile(`${dir}/src/a.txt`, "utf8"), "A");
    // A link to a file outside the source is written through, as before.
    await fsp.writeFile(`${dir}/outside.txt`, "old");
    await fsp.rm(`${dir}/dst/b.txt`);
    await fsp.symlink(`${dir}/outside.txt`, `${dir}/dst/b.txt`);
    await fs.copy(`${dir}/src`, `${dir}/dst`, { recursive: true });
    assert.equal(await fsp.readFile(`${dir}/outside.txt`, "utf8"), "B");
    assert.equal(await fsp.readlink(`${dir}/dst/b.txt`), `${dir}/outside.txt`);
  });
});

Deno.test("copy of a symlink replaces an existing file but not a directory", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    await fsp.symlink("../somewhere", `${dir}/link`);
    await fsp.writeFile(`${dir}/occupied`, "x");
    await fs.copy(`${dir}/link`, `${dir}/occupied`);
    assert.equal(await fsp.readlink(`${dir}/occupied`), "../somewhere");
    await fsp.mkdir(`${dir}/dir`);
    await rejectsWith(fs.copy(`${dir}/link`, `${dir}/dir`), "io", "EISDIR", `${dir}/dir`);
    assert.deepEqual((await fsp.readdir(dir)).sort(), ["dir", "link", "occupied"]);
  });
});

Deno.test("copy refuses a tree with a fifo before writing anything", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    await fsp.mkdir(`${dir}/src/a`, { recursive: true });
    await fsp.writeFile(`${dir}/src/a/file`, "x");
    execFileSync("mkfifo", [`${dir}/src/z-pipe`]);
    await rejectsWith(
      fs.copy(`${dir}/src`, `${dir}/dst`, { recursive: true }),
      "invalidInput",
      "EINVAL",
      `${dir}/src/z-pipe`,
    );
    await assert.rejects(fsp.lstat(`${dir}/dst`), { code: "ENOENT" });
  });
});

Deno.test("remove refuses the root directory", async () => {
  const fs = new LocalFileSystem();
  // recursive: false, so even a broken check could only rmdir("/"), which fails.
  await rejectsWith(fs.remove("/", { recursive: false }), "invalidInput", "EINVAL", "root");
  await rejectsWith(fs.remove("/tmp/..", { recursive: false }), "invalidInput", "EINVAL", "root");
});

Deno.test("remove of LINK/ refuses instead of touching the link's target", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    await fsp.mkdir(`${dir}/precious/sub`, { recursive: true });
    await fsp.writeFile(`${dir}/precious/data`, "keep me");
    await fsp.writeFile(`${dir}/file`, "x");
    await fsp.symlink("precious", `${dir}/link`);
    await fsp.symlink("file", `${dir}/file-link`);
    await fsp.symlink("nowhere", `${dir}/dangling`);
    for (const name of ["link/", "link//", "file-link/", "dangling/", "file/"]) {
      for (const options of [{}, { recursive: false, force: false }]) {
        await rejectsWith(fs.remove(`${dir}/${name}`, options), "io", "ENOTDIR", `${dir}/${name}`);
      }
    }
    const err = await rejectsWith(fs.remove(`${dir}/link/`), "io", "ENOTDIR", "symlink");
    assert.match(err.message, /without the trailing slash/);
    // "." and ".." as the last component name a directory through whatever
    // came before, the link included; like rm, they are refused.
    for (const name of ["link/.", "link/./", "link/sub/..", "precious/.", "precious/sub/.."]) {
      await rejectsWith(fs.remove(`${dir}/${name}`), "invalidInput", "EINVAL", `${dir}/${name}`);
    }
    assert.deepEqual((await fsp.readdir(`${dir}/precious`)).sort(), ["data", "sub"]);
    assert.equal(await fsp.readlink(`${dir}/link`), "precious");
    assert.equal(await fsp.readlink(`${dir}/dangling`), "nowhere");
    assert.equal(await fsp.readFile(`${dir}/file`, "utf8"), "x");
    // Without the slash the link goes and the target stays; a real
    // directory may have trailing slashes.
    await fs.remove(`${dir}/link`);
    await assert.rejects(fsp.lstat(`${dir}/link`), { code: "ENOENT" });
    assert.deepEqual((await fsp.readdir(`${dir}/precious`)).sort(), ["data", "sub"]);
    await fs.remove(`${dir}/precious/sub//`, { recursive: false, force: false });
    await fs.remove(`${dir}/precious/`);
    await assert.rejects(fsp.lstat(`${dir}/precious`), { code: "ENOENT" });
    // A missing path with a slash is still a forced success.
    await fs.remove(`${dir}/never-was/`);
  });
});

Deno.test("readDirectory reports entry types, following symlinks", async () => {
  await withTempDir(async (dir) => {
    const fs = new LocalFileSystem();
    await fsp.mkdir(`${dir}/d`);
    await fsp.writeFile(`${dir}/f`, "");
    await fsp.symlink("d", `${dir}/to-d`);
    await fsp.symlink("f", `${dir}/to-f`);
    await fsp.symlink("nowhere", `${dir}/broken`);
    execFileSync("mkfifo", [`${dir}/fifo`]);
    assert.deepEqual(await fs.readDirectory(dir), [
      { fileName: "broken", isDirectory: false, isFile: false },
      { fileName: "d", isDirectory: true, isFile: false },
      { fileName: "f", isDirectory: false, isFile: true },
      { fileName: "fifo", isDirectory: false, isFile: false },
      { fileName: "to-d", isDirectory: true, isFile: false },
      { fileName: "to-f", isDirectory: false, isFile: true },
    ]);
  });
});
