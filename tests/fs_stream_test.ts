/**
 * Black-box tests of the filesystem extensions for large files, over
 * stdio: ranged `fs/readFile`, `fs/writeFile` with `append` or `offset`,
 * and `fs/rename`, their announcement, their refusals, the sandbox gate,
 * and that v0 requests without the new params get exactly the v0 answers.
 */
import assert from "node:assert/strict";
import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { b64, type Msg, TestServer, unb64 } from "./harness.ts";
import { initializeResult, withServer, withTempDir } from "./server_helpers.ts";

const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const INTERNAL = -32603;

/** `withTempDir` under an `fs-stream-test-` name. */
const withDir = (fn: (dir: string) => Promise<void>): Promise<void> =>
  withTempDir(fn, "fs-stream-test-");

/** Send a request that must fail; returns its error after checking code, errno and wording. */
async function refused(
  s: TestServer,
  method: string,
  params: unknown,
  code: number,
  mentions: string,
  errno?: string,
): Promise<Msg> {
  const res = await s.request(method, params);
  assert.ok(res.error, `${method} ${JSON.stringify(params)} should fail: ${JSON.stringify(res)}`);
  assert.equal(res.error.code, code, JSON.stringify(res.error));
  assert.equal(res.error.data?.errno, errno, JSON.stringify(res.error));
  assert.ok(res.error.message.includes(mentions), `${res.error.message} names ${mentions}`);
  return res.error;
}

Deno.test("fs extensions are announced: capabilities.fs and fs/rename in methods", async () => {
  await withServer((s) => {
    const caps = initializeResult(s).capabilities;
    assert.deepEqual(caps.fs, { rangedRead: true, append: true, writeOffset: true, rename: true });
    assert.ok(caps.methods.includes("fs/rename"));
    return Promise.resolve();
  });
});

Deno.test("fs/readFile without offset or length answers exactly as v0", async () => {
  await withDir(async (dir) => {
    await writeFile(`${dir}/f`, "hello\n");
    await withServer(async (s) => {
      assert.deepEqual(await s.call("fs/readFile", { path: `${dir}/f` }), {
        dataBase64: b64("hello\n"),
      });
      // null reads as absent, as for every optional field.
      assert.deepEqual(await s.call("fs/readFile", { path: `${dir}/f`, offset: null }), {
        dataBase64: b64("hello\n"),
      });
      assert.deepEqual(
        await s.call("fs/writeFile", { path: `${dir}/g`, dataBase64: b64("x") }),
        {},
      );
      assert.deepEqual(
        await s.call("fs/writeFile", { path: `${dir}/g`, dataBase64: b64("y"), append: false }),
        {},
      );
      assert.equal(await readFile(`${dir}/g`, "utf8"), "y", "append: false replaces");
    });
  });
});

Deno.test("fs/readFile ranged: offset, length, size, eof, past the end", async () => {
  await withDir(async (dir) => {
    await writeFile(`${dir}/f`, "0123456789");
    await withServer(async (s) => {
      const read = async (params: Msg) => {
        const r = await s.call("fs/readFile", { path: `${dir}/f`, ...params });
        return [unb64(r.dataBase64), r.size, r.eof];
      };
      assert.deepEqual(await read({ offset: 0, length: 4 }), ["0123", 10, false]);
      assert.deepEqual(await read({ offset: 6, length: 4 }), ["6789", 10, true]);
      assert.deepEqual(await read({ offset: 8, length: 100 }), ["89", 10, true]);
      assert.deepEqual(await read({ offset: 3 }), ["3456789", 10, true]);
      assert.deepEqual(await read({ length: 2 }), ["01", 10, false]);
      assert.deepEqual(await read({ offset: 10, length: 1 }), ["", 10, true]);
      assert.deepEqual(await read({ offset: 1e6, length: 1 }), ["", 10, true]);
      assert.deepEqual(await read({ offset: 2, length: 0 }), ["", 10, false]);
      // A URI path works ranged too.
      const uri = await s.call("fs/readFile", {
        path: pathToFileURL(`${dir}/f`).href,
        offset: 9,
      });
      assert.equal(unb64(uri.dataBase64), "9");
    });
  });
});

Deno.test("fs/readFile ranged: bad values are -32602 naming the field; files still refused", async () => {
  await withDir(async (dir) => {
    await writeFile(`${dir}/f`, "x".repeat(100));
    await withServer(async (s) => {
      const path = `${dir}/f`;
      await refused(s, "fs/readFile", { path, offset: -1 }, INVALID_PARAMS, "offset must be");
      await refused(s, "fs/readFile", { path, length: -5 }, INVALID_PARAMS, "length must be");
      await refused(s, "fs/readFile", { path, offset: 1.5 }, INVALID_PARAMS, "got 1.5");
      await refused(s, "fs/readFile", { path, offset: "3" }, INVALID_PARAMS, 'got "3"');
      await refused(s, "fs/readFile", { path, offset: 2 ** 60 }, INVALID_PARAMS, "offset must");
      const huge = await refused(
        s,
        "fs/readFile",
        { path, length: 51 },
        INVALID_PARAMS,
        "length 51",
      );
      assert.match(huge.message, /over the read limit of 50 bytes/);
      // Without a length the rest of the file must fit the limit, as a whole read must.
      await refused(s, "fs/readFile", { path, offset: 10 }, INVALID_REQUEST, "90 bytes", "EFBIG");
      const rest = await s.call("fs/readFile", { path, offset: 60 });
      assert.deepEqual([unb64(rest.dataBase64).length, rest.eof], [40, true]);
      await refused(s, "fs/readFile", { path: dir, length: 1 }, INTERNAL, dir, "EISDIR");
      await refused(s, "fs/readFile", { path: `${dir}/no`, offset: 0 }, INTERNAL, "no", "ENOENT");
      // The connection is fine after all that.
      assert.equal((await s.call("fs/readFile", { path, offset: 99 })).eof, true);
    }, ["--max-read-file-bytes", "50"]);
  });
});

Deno.test("fs/writeFile append: creates, appends, and is refused with offset", async () => {
  await withDir(async (dir) => {
    await withServer(async (s) => {
      const path = `${dir}/log`;
      for (const line of ["one\n", "two\n"]) {
        assert.deepEqual(
          await s.call("fs/writeFile", { path, dataBase64: b64(line), append: true }),
          {},
        );
      }
      assert.equal(await readFile(path, "utf8"), "one\ntwo\n");
      await refused(
        s,
        "fs/writeFile",
        { path, dataBase64: b64("x"), append: true, offset: 0 },
        INVALID_PARAMS,
        "append and offset exclude each other",
      );
      await refused(
        s,
        "fs/writeFile",
        { path, dataBase64: b64("x"), append: "yes" },
        INVALID_PARAMS,
        "append must be a boolean",
      );
      await refused(
        s,
        "fs/writeFile",
        { path: dir, dataBase64: b64("x"), append: true },
        INTERNAL,
        dir,
        "EISDIR",
      );
      await refused(
        s,
        "fs/writeFile",
        { path: `${dir}/none/log`, dataBase64: b64("x"), append: true },
        INTERNAL,
        "none/log",
        "ENOENT",
      );
      assert.equal(await readFile(path, "utf8"), "one\ntwo\n");
    });
  });
});

Deno.test("fs/writeFile offset: positional writes in any order build the file", async () => {
  await withDir(async (dir) => {
    await withServer(async (s) => {
      const path = `${dir}/parts`;
      // Sent back to back: the server runs them concurrently, each at its own offset.
      const ids = ["cc", "aa", "bb"].map((text, i) => {
        const id = s.newId();
        const offset = [4, 0, 2][i];
        s.send({ id, method: "fs/writeFile", params: { path, dataBase64: b64(text), offset } });
        return id;
      });
      for (const id of ids) assert.deepEqual((await s.response(id)).result, {});
      assert.equal(await readFile(path, "utf8"), "aabbcc");
      await s.call("fs/writeFile", { path, dataBase64: b64("Z"), offset: 8 });
      assert.deepEqual(await readFile(path), Buffer.from("aabbcc\0\0Z"), "a hole reads as zeros");
      await s.call("fs/writeFile", { path, dataBase64: b64("B"), offset: 2 });
      assert.equal((await readFile(path, "utf8")).slice(0, 4), "aaBb", "never truncated");
      await refused(
        s,
        "fs/writeFile",
        { path, dataBase64: b64("x"), offset: -1 },
        INVALID_PARAMS,
        "offset must be an integer",
      );
    });
  });
});

Deno.test("fs/rename: moves files and directories atomically, errors name both paths", async () => {
  await withDir(async (dir) => {
    await writeFile(`${dir}/a`, "A");
    await writeFile(`${dir}/b`, "B");
    await mkdir(`${dir}/d`);
    await writeFile(`${dir}/d/inner`, "I");
    await symlink(`${dir}/a`, `${dir}/link`);
    await withServer(async (s) => {
      assert.deepEqual(
        await s.call("fs/rename", { sourcePath: `${dir}/a`, destinationPath: `${dir}/b` }),
        {},
      );
      assert.equal(await readFile(`${dir}/b`, "utf8"), "A");
      await s.call("fs/rename", { sourcePath: `${dir}/d`, destinationPath: `${dir}/e` });
      assert.equal(await readFile(`${dir}/e/inner`, "utf8"), "I");
      // A symlink is moved as itself.
      await s.call("fs/rename", { sourcePath: `${dir}/link`, destinationPath: `${dir}/link2` });
      assert.ok((await readdir(dir)).includes("link2"));
      const gone = await refused(
        s,
        "fs/rename",
        { sourcePath: `${dir}/a`, destinationPath: `${dir}/c` },
        INTERNAL,
        `rename ${dir}/a to ${dir}/c`,
        "ENOENT",
      );
      assert.match(gone.message, /no such file or directory/);
      await refused(
        s,
        "fs/rename",
        { sourcePath: `${dir}/b`, destinationPath: `${dir}/e` },
        INTERNAL,
        "is a directory",
        "EISDIR",
      );
      await refused(
        s,
        "fs/rename",
        { sourcePath: `${dir}/e`, destinationPath: `${dir}/e/sub` },
        INVALID_REQUEST,
        "invalid argument",
        "EINVAL",
      );
      await refused(
        s,
        "fs/rename",
        { sourcePath: "rel", destinationPath: `${dir}/x` },
        INVALID_PARAMS,
        "sourcePath",
      );
      await refused(s, "fs/rename", { sourcePath: `${dir}/b` }, INVALID_PARAMS, "destinationPath");
    });
  });
});

Deno.test("fs/rename across filesystems is EXDEV and copies nothing", async () => {
  const shm = await stat("/dev/shm").then((st) => st.isDirectory(), () => false);
  const tmpDev = (await stat("/tmp")).dev;
  if (!shm || (await stat("/dev/shm")).dev === tmpDev) return; // no second filesystem here
  await withDir(async (dir) => {
    await writeFile(`${dir}/f`, "F");
    const target = `/dev/shm/fs-stream-test-${Deno.pid}`;
    await withServer(async (s) => {
      await refused(
        s,
        "fs/rename",
        { sourcePath: `${dir}/f`, destinationPath: target },
        INTERNAL,
        "cross-device link",
        "EXDEV",
      );
    });
    assert.equal(await readFile(`${dir}/f`, "utf8"), "F");
    assert.equal(await stat(target).then(() => true, () => false), false);
  });
});

Deno.test("fs sandbox gate: rename needs write at both ends; append and ranged reads too", async () => {
  await withDir(async (dir) => {
    await mkdir(`${dir}/w`);
    await mkdir(`${dir}/ro`);
    await writeFile(`${dir}/w/f`, "W");
    await writeFile(`${dir}/ro/g`, "R");
    const sandbox = { mode: "restricted", read: ["/"], write: [`${dir}/w`] };
    await withServer(async (s) => {
      const denied = async (method: string, params: Msg, path: string) => {
        const err = await refused(
          s,
          method,
          { ...params, sandbox },
          INVALID_REQUEST,
          path,
          "EACCES",
        );
        assert.equal(err.data.sandboxDenied, true);
      };
      // Out of the writable directory, into it from a read-only one: both denied.
      await denied(
        "fs/rename",
        { sourcePath: `${dir}/w/f`, destinationPath: `${dir}/ro/f` },
        "ro/f",
      );
      await denied(
        "fs/rename",
        { sourcePath: `${dir}/ro/g`, destinationPath: `${dir}/w/g` },
        "ro/g",
      );
      await denied(
        "fs/writeFile",
        { path: `${dir}/ro/g`, dataBase64: b64("x"), append: true },
        "ro/g",
      );
      await denied(
        "fs/writeFile",
        { path: `${dir}/ro/g`, dataBase64: b64("x"), offset: 0 },
        "ro/g",
      );
      assert.equal(await readFile(`${dir}/w/f`, "utf8"), "W");
      assert.equal(await readFile(`${dir}/ro/g`, "utf8"), "R");
      // Within it: allowed; reads anywhere readable.
      await s.call("fs/rename", {
        sourcePath: `${dir}/w/f`,
        destinationPath: `${dir}/w/f2`,
        sandbox,
      });
      await s.call("fs/writeFile", {
        path: `${dir}/w/f2`,
        dataBase64: b64("+"),
        append: true,
        sandbox,
      });
      assert.equal(await readFile(`${dir}/w/f2`, "utf8"), "W+");
      const r = await s.call("fs/readFile", { path: `${dir}/ro/g`, offset: 0, length: 1, sandbox });
      assert.equal(unb64(r.dataBase64), "R");
    });
  });
});

Deno.test("codex dialect: the fs extensions answer there too", async () => {
  await withDir(async (dir) => {
    await writeFile(`${dir}/f`, "0123456789");
    await using s = new TestServer();
    const init = await s.request("initialize", { clientName: "codex", resumeSessionId: null });
    assert.ok(init.result?.sessionId);
    s.notify("initialized", {});
    const uri = (p: string) => pathToFileURL(p).href;
    const r = await s.call("fs/readFile", {
      path: uri(`${dir}/f`),
      offset: 4,
      length: 2,
      sandbox: null,
    });
    assert.deepEqual([unb64(r.dataBase64), r.size, r.eof], ["45", 10, false]);
    await s.call("fs/writeFile", {
      path: uri(`${dir}/f`),
      dataBase64: b64("!"),
      append: true,
      sandbox: null,
    });
    await s.call("fs/rename", {
      sourcePath: uri(`${dir}/f`),
      destinationPath: uri(`${dir}/g`),
      sandbox: null,
    });
    assert.equal(await readFile(`${dir}/g`, "utf8"), "0123456789!");
    const missing = await s.request("fs/rename", {
      sourcePath: uri(`${dir}/f`),
      destinationPath: uri(`${dir}/h`),
      sandbox: null,
    });
    assert.equal(missing.error?.code, -32004, "a missing path is the dialect's not-found");
  });
});
