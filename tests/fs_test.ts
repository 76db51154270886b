/**
 * Black-box tests of the `fs/*` methods over stdio: defaults, errors with
 * their codes and errno, symlinks, unicode names, file URIs, large files.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fsp from "node:fs/promises";
import process from "node:process";
import { pathToFileURL } from "node:url";
import {
  b64,
  type Msg,
  nodeServerCommand,
  serverCommand,
  TestServer,
  unb64,
  unb64Bytes,
} from "./harness.ts";
import { withServer, withTempDir as withTempDirIn } from "./server_helpers.ts";

const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const INTERNAL = -32603;

/** {@linkcode withTempDirIn} under an `fs-test-` name, to tell leftovers apart. */
const withTempDir = (fn: (dir: string) => Promise<void>): Promise<void> =>
  withTempDirIn(fn, "fs-test-");

/** Send a request that must fail; check its code, errno and that the message names `mentions`. */
async function expectError(
  s: TestServer,
  method: string,
  params: unknown,
  code: number,
  errno: string | undefined,
  mentions: string,
): Promise<Msg> {
  const res = await s.request(method, params);
  assert.ok(
    res.error,
    `${method} ${JSON.stringify(params)} should fail, got ${JSON.stringify(res)}`,
  );
  assert.equal(res.error.code, code, JSON.stringify(res.error));
  assert.equal(res.error.data?.errno, errno, JSON.stringify(res.error));
  assert.ok(
    res.error.message.includes(mentions),
    `message ${JSON.stringify(res.error.message)} should name ${mentions}`,
  );
  return res.error;
}

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

Deno.test("fs methods are listed in capabilities and gated by the handshake", async () => {
  const s = new TestServer();
  try {
    const early = await s.request("fs/readFile", { path: "/etc/hostname" });
    assert.equal(early.error?.code, INVALID_REQUEST);
    assert.match(early.error.message, /initialize/);
    const init = await s.request("initialize", { clientName: "fs-test" });
    for (
      const m of [
        "fs/readFile",
        "fs/writeFile",
        "fs/createDirectory",
        "fs/getMetadata",
        "fs/readDirectory",
        "fs/remove",
        "fs/copy",
      ]
    ) {
      assert.ok(init.result.capabilities.methods.includes(m), m);
    }
    const beforeInitialized = await s.request("fs/getMetadata", { path: "/" });
    assert.equal(beforeInitialized.error?.code, INVALID_REQUEST);
    s.notify("initialized");
    assert.equal((await s.call("fs/getMetadata", { path: "/" })).isDirectory, true);
  } finally {
    assert.equal((await s.close()).code, 0);
  }
});

Deno.test("fs/writeFile and fs/readFile: create, truncate, keep mode", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      const file = `${dir}/note.txt`;
      assert.deepEqual(
        await s.call("fs/writeFile", { path: file, dataBase64: b64("long first version") }),
        {},
      );
      assert.equal(await fsp.readFile(file, "utf8"), "long first version");
      await fsp.chmod(file, 0o640);
      await s.call("fs/writeFile", { path: file, dataBase64: b64("short") });
      const read = await s.call("fs/readFile", { path: file });
      assert.deepEqual(Object.keys(read), ["dataBase64"]);
      assert.equal(unb64(read.dataBase64), "short");
      assert.equal((await fsp.stat(file)).mode & 0o7777, 0o640);
      // Empty files and arbitrary bytes survive the round trip.
      await s.call("fs/writeFile", { path: file, dataBase64: "" });
      assert.equal((await s.call("fs/readFile", { path: file })).dataBase64, "");
      const bytes = new Uint8Array(256).map((_, i) => i);
      await s.call("fs/writeFile", { path: file, dataBase64: b64(bytes) });
      assert.deepEqual(unb64Bytes((await s.call("fs/readFile", { path: file })).dataBase64), bytes);
      // Writing through a symlink replaces the target, not the link.
      await fsp.symlink("note.txt", `${dir}/alias`);
      await s.call("fs/writeFile", { path: `${dir}/alias`, dataBase64: b64("via alias") });
      assert.equal(await fsp.readlink(`${dir}/alias`), "note.txt");
      assert.equal(await fsp.readFile(file, "utf8"), "via alias");
      assert.deepEqual((await fsp.readdir(dir)).sort(), ["alias", "note.txt"]);
    })
  );
});

Deno.test("fs/readFile and fs/writeFile errors", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      await fsp.writeFile(`${dir}/file`, "x");
      await expectError(
        s,
        "fs/readFile",
        { path: `${dir}/missing` },
        INTERNAL,
        "ENOENT",
        `${dir}/missing`,
      );
      await expectError(
        s,
        "fs/readFile",
        { path: `${dir}/file/x` },
        INTERNAL,
        "ENOTDIR",
        `${dir}/file/x`,
      );
      await expectError(s, "fs/readFile", { path: dir }, INTERNAL, "EISDIR", dir);
      await expectError(
        s,
        "fs/writeFile",
        { path: `${dir}/no/such/dir/f`, dataBase64: b64("x") },
        INTERNAL,
        "ENOENT",
        `${dir}/no/such/dir/f`,
      );
      await expectError(
        s,
        "fs/writeFile",
        { path: dir, dataBase64: b64("x") },
        INTERNAL,
        "EISDIR",
        dir,
      );
      await expectError(
        s,
        "fs/writeFile",
        { path: `${dir}/f`, dataBase64: "not base64!" },
        INVALID_PARAMS,
        undefined,
        "dataBase64",
      );
      await expectError(
        s,
        "fs/writeFile",
        { path: `${dir}/f`, dataBase64: "aGk" },
        INVALID_PARAMS,
        undefined,
        "base64",
      );
      await expectError(
        s,
        "fs/writeFile",
        { path: `${dir}/f` },
        INVALID_PARAMS,
        undefined,
        "dataBase64",
      );
      await assert.rejects(fsp.lstat(`${dir}/f`), { code: "ENOENT" });
    })
  );
});

Deno.test("fs/readFile refuses files over --max-read-file-bytes before reading them", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      await fsp.writeFile(`${dir}/fits`, "x".repeat(100));
      await fsp.writeFile(`${dir}/too-big`, "x".repeat(101));
      assert.equal(
        unb64((await s.call("fs/readFile", { path: `${dir}/fits` })).dataBase64).length,
        100,
      );
      const err = await expectError(
        s,
        "fs/readFile",
        { path: `${dir}/too-big` },
        INVALID_REQUEST,
        "EFBIG",
        `${dir}/too-big`,
      );
      assert.match(err.message, /101 bytes.*100 bytes/);
      // Writing is not limited by the read limit.
      await s.call("fs/writeFile", { path: `${dir}/written`, dataBase64: b64("y".repeat(500)) });
      assert.equal((await fsp.stat(`${dir}/written`)).size, 500);
    }, ["--max-read-file-bytes", "100"])
  );
});

Deno.test("fs/createDirectory: recursive default, EEXIST and ENOENT without it", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      assert.deepEqual(await s.call("fs/createDirectory", { path: `${dir}/a/b/c` }), {});
      assert.ok((await fsp.stat(`${dir}/a/b/c`)).isDirectory());
      // Existing directory is fine with the default (recursive).
      assert.deepEqual(await s.call("fs/createDirectory", { path: `${dir}/a/b/c` }), {});
      assert.deepEqual(
        await s.call("fs/createDirectory", { path: `${dir}/a/solo`, recursive: false }),
        {},
      );
      assert.ok((await fsp.stat(`${dir}/a/solo`)).isDirectory());
      await expectError(
        s,
        "fs/createDirectory",
        { path: `${dir}/a/b`, recursive: false },
        INTERNAL,
        "EEXIST",
        `${dir}/a/b`,
      );
      await expectError(
        s,
        "fs/createDirectory",
        { path: `${dir}/x/y`, recursive: false },
        INTERNAL,
        "ENOENT",
        `${dir}/x/y`,
      );
      await fsp.writeFile(`${dir}/plain`, "");
      await expectError(
        s,
        "fs/createDirectory",
        { path: `${dir}/plain` },
        INTERNAL,
        "EEXIST",
        `${dir}/plain`,
      );
      await expectError(
        s,
        "fs/createDirectory",
        { path: `${dir}/plain/sub` },
        INTERNAL,
        "ENOTDIR",
        `${dir}/plain/sub`,
      );
      await expectError(
        s,
        "fs/createDirectory",
        { path: `${dir}/z`, recursive: "yes" },
        INVALID_PARAMS,
        undefined,
        "recursive",
      );
    })
  );
});

Deno.test("fs/getMetadata: files, directories, symlinks followed, times", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      await fsp.writeFile(`${dir}/f`, "data");
      await fsp.mkdir(`${dir}/d`);
      await fsp.symlink("d", `${dir}/to-d`);
      await fsp.symlink("f", `${dir}/to-f`);
      await fsp.symlink("gone", `${dir}/dangling`);
      const past = new Date(Date.UTC(2001, 8, 9, 1, 46, 40, 123));
      await fsp.utimes(`${dir}/f`, past, past);

      const f = await s.call("fs/getMetadata", { path: `${dir}/f` });
      assert.deepEqual(Object.keys(f).sort(), [
        "createdAtMs",
        "isDirectory",
        "isFile",
        "modifiedAtMs",
      ]);
      assert.equal(f.isFile, true);
      assert.equal(f.isDirectory, false);
      assert.equal(f.modifiedAtMs, past.getTime());
      assert.ok(Number.isInteger(f.createdAtMs) && f.createdAtMs >= 0);

      const d = await s.call("fs/getMetadata", { path: `${dir}/d` });
      assert.equal(d.isDirectory, true);
      assert.equal(d.isFile, false);
      assert.ok(Number.isInteger(d.modifiedAtMs) && d.modifiedAtMs > 0);

      const toD = await s.call("fs/getMetadata", { path: `${dir}/to-d` });
      assert.equal(toD.isDirectory, true);
      const toF = await s.call("fs/getMetadata", { path: `${dir}/to-f` });
      assert.equal(toF.isFile, true);
      assert.equal(toF.modifiedAtMs, past.getTime());

      await expectError(
        s,
        "fs/getMetadata",
        { path: `${dir}/dangling` },
        INTERNAL,
        "ENOENT",
        `${dir}/dangling`,
      );
      await expectError(
        s,
        "fs/getMetadata",
        { path: `${dir}/nothing` },
        INTERNAL,
        "ENOENT",
        `${dir}/nothing`,
      );
      await expectError(
        s,
        "fs/getMetadata",
        { path: `${dir}/f/x` },
        INTERNAL,
        "ENOTDIR",
        `${dir}/f/x`,
      );
    })
  );
});

Deno.test("fs/readDirectory: sorted entries, symlinks and special files", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      await fsp.mkdir(`${dir}/list`);
      const l = `${dir}/list`;
      await fsp.writeFile(`${l}/b.txt`, "");
      await fsp.mkdir(`${l}/a-dir`);
      await fsp.writeFile(`${l}/C upper`, "");
      await fsp.symlink("a-dir", `${l}/link-dir`);
      await fsp.symlink("b.txt", `${l}/link-file`);
      await fsp.symlink("missing", `${l}/link-dangling`);
      execFileSync("mkfifo", [`${l}/pipe`]);
      const { entries } = await s.call("fs/readDirectory", { path: l });
      assert.deepEqual(entries, [
        { fileName: "C upper", isDirectory: false, isFile: true },
        { fileName: "a-dir", isDirectory: true, isFile: false },
        { fileName: "b.txt", isDirectory: false, isFile: true },
        { fileName: "link-dangling", isDirectory: false, isFile: false },
        { fileName: "link-dir", isDirectory: true, isFile: false },
        { fileName: "link-file", isDirectory: false, isFile: true },
        { fileName: "pipe", isDirectory: false, isFile: false },
      ]);
      assert.deepEqual(await s.call("fs/readDirectory", { path: `${l}/a-dir` }), { entries: [] });
      // A symlink to a directory can be listed through.
      await fsp.writeFile(`${l}/a-dir/inside`, "");
      assert.deepEqual((await s.call("fs/readDirectory", { path: `${l}/link-dir` })).entries, [
        { fileName: "inside", isDirectory: false, isFile: true },
      ]);
      await expectError(
        s,
        "fs/readDirectory",
        { path: `${l}/b.txt` },
        INTERNAL,
        "ENOTDIR",
        `${l}/b.txt`,
      );
      await expectError(
        s,
        "fs/readDirectory",
        { path: `${l}/nope` },
        INTERNAL,
        "ENOENT",
        `${l}/nope`,
      );
    })
  );
});

Deno.test("fs/remove: defaults are recursive and force", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      await fsp.mkdir(`${dir}/tree/a/b`, { recursive: true });
      await fsp.writeFile(`${dir}/tree/a/b/f`, "x");
      await fsp.writeFile(`${dir}/file`, "x");
      assert.deepEqual(await s.call("fs/remove", { path: `${dir}/tree` }), {});
      await assert.rejects(fsp.lstat(`${dir}/tree`), { code: "ENOENT" });
      assert.deepEqual(await s.call("fs/remove", { path: `${dir}/file` }), {});
      await assert.rejects(fsp.lstat(`${dir}/file`), { code: "ENOENT" });
      // Missing path with the default force: success.
      assert.deepEqual(await s.call("fs/remove", { path: `${dir}/never-was` }), {});
      assert.deepEqual(await s.call("fs/remove", { path: `${dir}/never/was/either` }), {});
    })
  );
});

Deno.test("fs/remove: without force or recursive, and symlinks", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      await expectError(
        s,
        "fs/remove",
        { path: `${dir}/missing`, force: false },
        INTERNAL,
        "ENOENT",
        `${dir}/missing`,
      );
      await fsp.mkdir(`${dir}/full`);
      await fsp.writeFile(`${dir}/full/f`, "");
      await expectError(
        s,
        "fs/remove",
        { path: `${dir}/full`, recursive: false },
        INTERNAL,
        "ENOTEMPTY",
        `${dir}/full`,
      );
      assert.ok((await fsp.stat(`${dir}/full/f`)).isFile());
      await fsp.mkdir(`${dir}/empty`);
      assert.deepEqual(
        await s.call("fs/remove", { path: `${dir}/empty`, recursive: false, force: false }),
        {},
      );
      await assert.rejects(fsp.lstat(`${dir}/empty`), { code: "ENOENT" });
      // Removing a symlink removes the link, never what it points to.
      await fsp.symlink("full", `${dir}/link`);
      await s.call("fs/remove", { path: `${dir}/link` });
      await assert.rejects(fsp.lstat(`${dir}/link`), { code: "ENOENT" });
      assert.ok((await fsp.stat(`${dir}/full/f`)).isFile());
      await fsp.writeFile(`${dir}/plain`, "");
      await expectError(
        s,
        "fs/remove",
        { path: `${dir}/plain/x`, force: false },
        INTERNAL,
        "ENOTDIR",
        `${dir}/plain/x`,
      );
      await expectError(
        s,
        "fs/remove",
        { path: `${dir}/x`, force: 1 },
        INVALID_PARAMS,
        undefined,
        "force",
      );
    })
  );
});

/**
 * The server under test by default, and the Node build (its `node:fs` and
 * Deno's differ on symlinks named with a trailing slash).
 */
const RUNTIMES: [string, () => string[] | undefined][] = [
  ["", () => undefined],
  [" (Node build)", nodeServerCommand],
];

for (const [runtime, command] of RUNTIMES) {
  Deno.test(`fs/remove: LINK/ is refused and the link's target is never touched${runtime}`, async () => {
    await withTempDir((dir) =>
      withServer(
        async (s) => {
          await fsp.mkdir(`${dir}/precious/sub`, { recursive: true });
          await fsp.writeFile(`${dir}/precious/data.txt`, "keep me");
          await fsp.symlink(`${dir}/precious`, `${dir}/link`);
          for (const path of [`${dir}/link/`, `${dir}/link//`]) {
            for (const options of [{}, { recursive: false }, { force: false }]) {
              const err = await expectError(
                s,
                "fs/remove",
                { path, ...options },
                INTERNAL,
                "ENOTDIR",
                path,
              );
              assert.match(err.message, /symlink/);
            }
          }
          for (const path of [`${dir}/link/.`, `${dir}/link/sub/..`]) {
            await expectError(s, "fs/remove", { path }, INVALID_REQUEST, "EINVAL", path);
          }
          assert.deepEqual((await fsp.readdir(`${dir}/precious`)).sort(), ["data.txt", "sub"]);
          assert.equal(await fsp.readlink(`${dir}/link`), `${dir}/precious`);
          // Without the slash the link itself goes, and only the link.
          assert.deepEqual(await s.call("fs/remove", { path: `${dir}/link` }), {});
          await assert.rejects(fsp.lstat(`${dir}/link`), { code: "ENOENT" });
          assert.equal(await fsp.readFile(`${dir}/precious/data.txt`, "utf8"), "keep me");
          // A real directory may be named with a trailing slash.
          assert.deepEqual(await s.call("fs/remove", { path: `${dir}/precious/` }), {});
          await assert.rejects(fsp.lstat(`${dir}/precious`), { code: "ENOENT" });
        },
        [],
        command(),
      )
    );
  });
}

Deno.test("fs/copy: files, overwrite, and directories need recursive", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      await fsp.writeFile(`${dir}/src.sh`, "#!/bin/sh\necho hi\n");
      await fsp.chmod(`${dir}/src.sh`, 0o754);
      assert.deepEqual(
        await s.call("fs/copy", { sourcePath: `${dir}/src.sh`, destinationPath: `${dir}/dst.sh` }),
        {},
      );
      assert.equal(await fsp.readFile(`${dir}/dst.sh`, "utf8"), "#!/bin/sh\necho hi\n");
      assert.equal((await fsp.stat(`${dir}/dst.sh`)).mode & 0o777, 0o754);
      await fsp.writeFile(`${dir}/other`, "a much longer existing destination file");
      await s.call("fs/copy", { sourcePath: `${dir}/src.sh`, destinationPath: `${dir}/other` });
      assert.equal(await fsp.readFile(`${dir}/other`, "utf8"), "#!/bin/sh\necho hi\n");

      await fsp.mkdir(`${dir}/folder`);
      await expectError(
        s,
        "fs/copy",
        { sourcePath: `${dir}/folder`, destinationPath: `${dir}/folder2` },
        INVALID_REQUEST,
        "EISDIR",
        `${dir}/folder`,
      );
      await assert.rejects(fsp.lstat(`${dir}/folder2`), { code: "ENOENT" });
      await expectError(
        s,
        "fs/copy",
        { sourcePath: `${dir}/none`, destinationPath: `${dir}/x` },
        INTERNAL,
        "ENOENT",
        `${dir}/none`,
      );
      await expectError(
        s,
        "fs/copy",
        { sourcePath: `${dir}/src.sh`, destinationPath: `${dir}/no/dir/x` },
        INTERNAL,
        "ENOENT",
        `${dir}/no/dir/x`,
      );
      execFileSync("mkfifo", [`${dir}/fifo`]);
      await expectError(
        s,
        "fs/copy",
        { sourcePath: `${dir}/fifo`, destinationPath: `${dir}/fifo2` },
        INVALID_REQUEST,
        "EINVAL",
        `${dir}/fifo`,
      );
      await expectError(
        s,
        "fs/copy",
        { sourcePath: `${dir}/src.sh` },
        INVALID_PARAMS,
        undefined,
        "destinationPath",
      );
    })
  );
});

Deno.test("fs/copy: trees with nested directories and symlinks recreated as symlinks", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      const src = `${dir}/src`;
      await fsp.mkdir(`${src}/sub/deeper`, { recursive: true });
      await fsp.mkdir(`${src}/empty`);
      await fsp.writeFile(`${src}/top.txt`, "top");
      await fsp.writeFile(`${src}/sub/deeper/leaf.bin`, new Uint8Array([0, 1, 2, 255]));
      await fsp.symlink("../top.txt", `${src}/sub/rel-link`);
      await fsp.symlink("/etc/hostname", `${src}/abs-link`);
      await fsp.symlink("sub", `${src}/dir-link`);
      await fsp.symlink("does-not-exist", `${src}/dangling`);

      assert.deepEqual(
        await s.call("fs/copy", {
          sourcePath: src,
          destinationPath: `${dir}/dst`,
          recursive: true,
        }),
        {},
      );
      const dst = `${dir}/dst`;
      assert.equal(await fsp.readFile(`${dst}/top.txt`, "utf8"), "top");
      assert.deepEqual(
        new Uint8Array(await fsp.readFile(`${dst}/sub/deeper/leaf.bin`)),
        new Uint8Array([0, 1, 2, 255]),
      );
      assert.ok((await fsp.stat(`${dst}/empty`)).isDirectory());
      for (
        const [link, target] of [["sub/rel-link", "../top.txt"], ["abs-link", "/etc/hostname"], [
          "dir-link",
          "sub",
        ], ["dangling", "does-not-exist"]]
      ) {
        assert.ok((await fsp.lstat(`${dst}/${link}`)).isSymbolicLink(), link);
        assert.equal(await fsp.readlink(`${dst}/${link}`), target);
      }
      // The copy is independent of the source.
      await fsp.writeFile(`${src}/top.txt`, "changed");
      assert.equal(await fsp.readFile(`${dst}/top.txt`, "utf8"), "top");

      // A top-level symlink is copied as a link, also without recursive.
      await s.call("fs/copy", {
        sourcePath: `${src}/dir-link`,
        destinationPath: `${dir}/copied-link`,
      });
      assert.ok((await fsp.lstat(`${dir}/copied-link`)).isSymbolicLink());
      assert.equal(await fsp.readlink(`${dir}/copied-link`), "sub");
    })
  );
});

Deno.test("fs/copy: a directory into itself is refused however it is spelled", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      const tree = `${dir}/tree`;
      await fsp.mkdir(`${tree}/sub`, { recursive: true });
      await fsp.writeFile(`${tree}/f`, "x");
      await fsp.symlink("tree", `${dir}/alias`);
      await fsp.mkdir(`${dir}/other`);
      const spellings = [
        tree,
        `${tree}/copy`,
        `${tree}/sub/copy`,
        `${tree}/sub/new/deeper`,
        `${dir}/alias/copy`,
        `${dir}/other/../tree/copy`,
        `${tree}/sub/../copy`,
        pathToFileURL(`${tree}/copy-by-uri`).href,
      ];
      for (const destinationPath of spellings) {
        const err = await expectError(
          s,
          "fs/copy",
          { sourcePath: tree, destinationPath, recursive: true },
          INVALID_REQUEST,
          "EINVAL",
          tree,
        );
        assert.match(err.message, /into itself/);
      }
      // The symlinked source spelling is caught too.
      await expectError(
        s,
        "fs/copy",
        { sourcePath: `${dir}/alias/`, destinationPath: `${tree}/x`, recursive: true },
        INVALID_REQUEST,
        "EINVAL",
        "into itself",
      );
      const { entries } = await s.call("fs/readDirectory", { path: tree });
      assert.deepEqual(entries.map((e: Msg) => e.fileName), ["f", "sub"]);
      assert.deepEqual((await s.call("fs/readDirectory", { path: `${tree}/sub` })).entries, []);
      // A sibling whose name merely starts with the source's name is fine.
      await s.call("fs/copy", {
        sourcePath: tree,
        destinationPath: `${dir}/tree-copy`,
        recursive: true,
      });
      assert.equal(await fsp.readFile(`${dir}/tree-copy/f`, "utf8"), "x");
    })
  );
});

for (const [runtime, command] of RUNTIMES) {
  Deno.test(`fs/copy: never merges through a symlink in the destination${runtime}`, async () => {
    await withTempDir((dir) =>
      withServer(
        async (s) => {
          const src = `${dir}/src`;
          await fsp.mkdir(`${src}/sub`, { recursive: true });
          await fsp.writeFile(`${src}/a.txt`, "ORIGINAL a.txt of src");
          await fsp.writeFile(`${src}/sub/a.txt`, "sub/a.txt");
          await fsp.mkdir(`${dir}/dst`);
          await fsp.symlink(src, `${dir}/dst/sub`);
          const err = await expectError(
            s,
            "fs/copy",
            { sourcePath: src, destinationPath: `${dir}/dst`, recursive: true },
            INTERNAL,
            "EEXIST",
            `${dir}/dst/sub`,
          );
          assert.match(err.message, /symlink/);
          assert.equal(await fsp.readFile(`${src}/a.txt`, "utf8"), "ORIGINAL a.txt of src");
          assert.deepEqual((await fsp.readdir(src)).sort(), ["a.txt", "sub"]);
          assert.deepEqual((await fsp.readdir(`${src}/sub`)).sort(), ["a.txt"]);
          // A real directory there is merged into.
          await fsp.rm(`${dir}/dst/sub`);
          await fsp.mkdir(`${dir}/dst/sub`);
          await fsp.writeFile(`${dir}/dst/sub/kept`, "kept");
          await s.call("fs/copy", {
            sourcePath: src,
            destinationPath: `${dir}/dst`,
            recursive: true,
          });
          assert.deepEqual((await fsp.readdir(`${dir}/dst/sub`)).sort(), ["a.txt", "kept"]);
          assert.equal(await fsp.readFile(`${dir}/dst/a.txt`, "utf8"), "ORIGINAL a.txt of src");
        },
        [],
        command(),
      )
    );
  });
}

Deno.test("fs methods: relative paths and bad params are -32602 and the connection lives on", async () => {
  await withServer(async (s) => {
    const started = await s.start("sleeper", ["sleep", "30"]);
    assert.deepEqual(started.result, { processId: "sleeper" });
    const cases: [string, Msg, string][] = [
      ["fs/readFile", { path: "relative.txt" }, "path"],
      ["fs/writeFile", { path: "./x", dataBase64: "" }, "path"],
      ["fs/createDirectory", { path: "dir" }, "path"],
      ["fs/getMetadata", { path: "" }, "path"],
      ["fs/readDirectory", { path: "~/x" }, "path"],
      ["fs/remove", { path: "tmp/x" }, "path"],
      ["fs/copy", { sourcePath: "a", destinationPath: "/tmp/b" }, "sourcePath"],
      ["fs/copy", { sourcePath: "/tmp/a", destinationPath: "b" }, "destinationPath"],
      ["fs/readFile", { path: 42 }, "path"],
      ["fs/readFile", {}, "path"],
      ["fs/readFile", { path: "file://elsewhere/etc/passwd" }, "remote host"],
      ["fs/readFile", { path: "/tmp/nul\u0000byte" }, "NUL"],
      ["fs/getMetadata", ["/tmp"], "params"],
    ];
    for (const [method, params, mentions] of cases) {
      await expectError(s, method, params, INVALID_PARAMS, undefined, mentions);
    }
    const read = await s.call("process/read", { processId: "sleeper" });
    assert.equal(read.exited, false);
    assert.equal((await s.call("fs/getMetadata", { path: "/tmp" })).isDirectory, true);
    assert.deepEqual(await s.call("process/terminate", { processId: "sleeper" }), {
      running: true,
    });
    await s.waitExited("sleeper");
  });
});

Deno.test("fs methods: unicode and space-containing names, file URIs", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      const folder = `${dir}/dossier été ☃`;
      const file = `${folder}/naïve file 日本語.txt`;
      const url = (p: string) => pathToFileURL(p).href;
      assert.match(url(file), /%20/);
      await s.call("fs/createDirectory", { path: url(folder) });
      await s.call("fs/writeFile", { path: url(file), dataBase64: b64("héllo wörld") });
      assert.equal(await fsp.readFile(file, "utf8"), "héllo wörld");
      assert.equal(unb64((await s.call("fs/readFile", { path: file })).dataBase64), "héllo wörld");
      assert.equal(
        unb64((await s.call("fs/readFile", { path: url(file) })).dataBase64),
        "héllo wörld",
      );
      assert.deepEqual((await s.call("fs/readDirectory", { path: url(folder) })).entries, [
        { fileName: "naïve file 日本語.txt", isDirectory: false, isFile: true },
      ]);
      assert.equal((await s.call("fs/getMetadata", { path: url(file) })).isFile, true);
      await s.call("fs/copy", {
        sourcePath: url(folder),
        destinationPath: url(`${dir}/copie ☃`),
        recursive: true,
      });
      assert.equal(
        await fsp.readFile(`${dir}/copie ☃/naïve file 日本語.txt`, "utf8"),
        "héllo wörld",
      );
      // A plain path with a literal percent sign is not URI-decoded.
      await s.call("fs/writeFile", { path: `${dir}/100%20sure`, dataBase64: b64("pct") });
      assert.equal(await fsp.readFile(`${dir}/100%20sure`, "utf8"), "pct");
      await expectError(
        s,
        "fs/readFile",
        { path: url(`${dir}/absent ☃`) },
        INTERNAL,
        "ENOENT",
        `${dir}/absent ☃`,
      );
      await s.call("fs/remove", { path: url(folder) });
      await assert.rejects(fsp.lstat(folder), { code: "ENOENT" });
      await s.call("fs/remove", { path: `file://localhost${dir}/copie%20%E2%98%83` });
      await assert.rejects(fsp.lstat(`${dir}/copie ☃`), { code: "ENOENT" });
    })
  );
});

Deno.test("fs: a 50 MiB file round trip keeps every byte", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      const data = new Uint8Array(randomBytes(50 * 1024 * 1024));
      const digest = sha256(data);
      const file = `${dir}/big.bin`;
      await s.call("fs/writeFile", { path: file, dataBase64: b64(data) }, 60_000);
      assert.equal(sha256(new Uint8Array(await fsp.readFile(file))), digest);
      const read = await s.call("fs/readFile", { path: file }, 60_000);
      const back = unb64Bytes(read.dataBase64);
      assert.equal(back.byteLength, data.byteLength);
      assert.equal(sha256(back), digest);
      await s.call("fs/copy", { sourcePath: file, destinationPath: `${dir}/big-copy.bin` }, 60_000);
      assert.equal(sha256(new Uint8Array(await fsp.readFile(`${dir}/big-copy.bin`))), digest);
      // Drop the large messages the harness kept.
      s.messages.length = 0;
    })
  );
});

const isRoot = process.getuid?.() === 0;
/** nobody's uid and nogroup's gid on Debian. */
const NOBODY = 65534;

Deno.test("fs errors: permission denied is EACCES (server without DAC override)", async () => {
  // Tests run as root, which bypasses permission checks. The server keeps
  // root's uid (so it can read this checkout wherever it lies, a 0700 home
  // included) but loses the capabilities that bypass file permissions, and
  // the files belong to nobody. An unprivileged run starts it as itself.
  const command = isRoot
    ? ["setpriv", "--bounding-set=-dac_override,-dac_read_search", ...serverCommand()]
    : undefined;
  await withTempDir(async (dir) => {
    await fsp.chmod(dir, 0o755);
    await fsp.writeFile(`${dir}/secret`, "top secret");
    await fsp.chmod(`${dir}/secret`, 0o600);
    await fsp.mkdir(`${dir}/private`, { mode: 0o700 });
    await fsp.chmod(`${dir}/private`, 0o700);
    await fsp.writeFile(`${dir}/private/inner`, "x");
    await fsp.writeFile(`${dir}/public`, "readable");
    await fsp.chmod(`${dir}/public`, 0o644);
    if (isRoot) {
      for (const p of ["", "/secret", "/private", "/private/inner", "/public"]) {
        await fsp.chown(`${dir}${p}`, NOBODY, NOBODY);
      }
    }
    await withServer(
      async (s) => {
        assert.equal(
          unb64((await s.call("fs/readFile", { path: `${dir}/public` })).dataBase64),
          "readable",
        );
        await expectError(
          s,
          "fs/readFile",
          { path: `${dir}/secret` },
          INTERNAL,
          "EACCES",
          `${dir}/secret`,
        );
        await expectError(
          s,
          "fs/readDirectory",
          { path: `${dir}/private` },
          INTERNAL,
          "EACCES",
          `${dir}/private`,
        );
        await expectError(
          s,
          "fs/getMetadata",
          { path: `${dir}/private/inner` },
          INTERNAL,
          "EACCES",
          `${dir}/private/inner`,
        );
        await expectError(
          s,
          "fs/writeFile",
          { path: `${dir}/new`, dataBase64: b64("x") },
          INTERNAL,
          "EACCES",
          `${dir}/new`,
        );
        await expectError(
          s,
          "fs/writeFile",
          { path: `${dir}/public`, dataBase64: b64("x") },
          INTERNAL,
          "EACCES",
          `${dir}/public`,
        );
        await expectError(
          s,
          "fs/createDirectory",
          { path: `${dir}/sub` },
          INTERNAL,
          "EACCES",
          `${dir}/sub`,
        );
        await expectError(
          s,
          "fs/remove",
          { path: `${dir}/public` },
          INTERNAL,
          "EACCES",
          `${dir}/public`,
        );
        await expectError(
          s,
          "fs/remove",
          { path: `${dir}/private/inner` },
          INTERNAL,
          "EACCES",
          `${dir}/private/inner`,
        );
        await expectError(
          s,
          "fs/copy",
          { sourcePath: `${dir}/secret`, destinationPath: "/tmp/stolen-secret" },
          INTERNAL,
          "EACCES",
          `${dir}/secret`,
        );
      },
      [],
      command,
    );
    assert.equal(await fsp.readFile(`${dir}/public`, "utf8"), "readable");
    assert.deepEqual((await fsp.readdir(dir)).sort(), ["private", "public", "secret"]);
    await assert.rejects(fsp.lstat("/tmp/stolen-secret"), { code: "ENOENT" });
  });
});
