/**
 * `fs/writeFile` never leaves a half-written file: a write that fails
 * midway (disk full, file size limit) keeps the old content and leaves no
 * temp file, and concurrent readers only ever see a whole version.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fsp from "node:fs/promises";
import { tmpdir } from "node:os";
import { b64, serverCommand, unb64 } from "./harness.ts";
import { withServer, withTempDir as withTempDirIn } from "./server_helpers.ts";

const INTERNAL = -32603;

/** {@linkcode withTempDirIn} under an `fs-atomic-test-` name, to tell leftovers apart. */
const withTempDir = (fn: (dir: string) => Promise<void>): Promise<void> =>
  withTempDirIn(fn, "fs-atomic-test-");

/** Mount a tmpfs of `size` on `dir`; false (with the reason logged) when impossible. */
function mountTmpfs(dir: string, size: string): boolean {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    return true;
  } catch (err) {
    console.error(`cannot mount a tmpfs (${err instanceof Error ? err.message : err})`);
    return false;
  }
}

const canMount = await (async () => {
  const probe = await fsp.mkdtemp(`${tmpdir()}/fs-atomic-probe-`);
  try {
    if (!mountTmpfs(probe, "64k")) return false;
    execFileSync("umount", [probe]);
    return true;
  } finally {
    await fsp.rmdir(probe);
  }
})();
if (!canMount) {
  console.error("fs_atomic_test: skipping the tmpfs test: mounting needs root (CAP_SYS_ADMIN)");
}

Deno.test({
  name: "writeFile that runs out of space keeps the old file and leaves no temp file",
  ignore: !canMount,
  fn: () =>
    withTempDir(async (dir) => {
      const mnt = `${dir}/mnt`;
      await fsp.mkdir(mnt);
      assert.ok(mountTmpfs(mnt, "1m"));
      try {
        await fsp.writeFile(`${mnt}/config`, "old content");
        const big = b64(new Uint8Array(2 * 1024 * 1024).fill(0x41));
        await withServer(async (s) => {
          const res = await s.request("fs/writeFile", { path: `${mnt}/config`, dataBase64: big });
          assert.equal(res.error?.code, INTERNAL, JSON.stringify(res));
          assert.equal(res.error.data?.errno, "ENOSPC");
          assert.ok(res.error.message.includes(`${mnt}/config`), res.error.message);
          assert.equal(await fsp.readFile(`${mnt}/config`, "utf8"), "old content");
          assert.deepEqual(await fsp.readdir(mnt), ["config"]);

          // A new file that does not fit is not created at all.
          const fresh = await s.request("fs/writeFile", { path: `${mnt}/fresh`, dataBase64: big });
          assert.equal(fresh.error?.data?.errno, "ENOSPC");
          assert.deepEqual(await fsp.readdir(mnt), ["config"]);

          // The failed temp files gave their space back: a fitting write works.
          await s.call("fs/writeFile", { path: `${mnt}/config`, dataBase64: b64("new content") });
          assert.equal(await fsp.readFile(`${mnt}/config`, "utf8"), "new content");
          assert.deepEqual(await fsp.readdir(mnt), ["config"]);
        });
      } finally {
        execFileSync("umount", ["-l", mnt]);
      }
    }),
});

Deno.test("writeFile over the file size limit (RLIMIT_FSIZE) keeps the old file", async () => {
  await withTempDir(async (dir) => {
    await fsp.writeFile(`${dir}/data`, "version 1");
    // Ignoring SIGXFSZ (inherited across exec) turns the limit into EFBIG
    // from write() instead of killing the server.
    const command = [
      "sh",
      "-c",
      'trap "" XFSZ; exec prlimit --fsize=1048576 -- "$@"',
      "sh",
      ...serverCommand(),
    ];
    await withServer(
      async (s) => {
        const res = await s.request("fs/writeFile", {
          path: `${dir}/data`,
          dataBase64: b64(new Uint8Array(3 * 1024 * 1024).fill(0x42)),
        });
        assert.equal(res.error?.code, INTERNAL, JSON.stringify(res));
        assert.equal(res.error.data?.errno, "EFBIG");
        assert.equal(await fsp.readFile(`${dir}/data`, "utf8"), "version 1");
        assert.deepEqual(await fsp.readdir(dir), ["data"]);
        // The server carries on.
        await s.call("fs/writeFile", { path: `${dir}/data`, dataBase64: b64("version 2") });
        assert.equal(
          unb64((await s.call("fs/readFile", { path: `${dir}/data` })).dataBase64),
          "version 2",
        );
      },
      [],
      command,
    );
  });
});

Deno.test("writeFile into a directory that has disappeared fails cleanly", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      await fsp.mkdir(`${dir}/gone`);
      await s.call("fs/writeFile", { path: `${dir}/gone/f`, dataBase64: b64("x") });
      await fsp.rm(`${dir}/gone`, { recursive: true });
      const res = await s.request("fs/writeFile", { path: `${dir}/gone/f`, dataBase64: b64("y") });
      assert.equal(res.error?.code, INTERNAL);
      assert.equal(res.error.data?.errno, "ENOENT");
      assert.deepEqual(await fsp.readdir(dir), []);
    })
  );
});

Deno.test("concurrent readers see either the old or the new file, never a mix", async () => {
  await withTempDir((dir) =>
    withServer(async (s) => {
      const file = `${dir}/shared`;
      const size = 1024 * 1024;
      const versions = [0x61, 0x62, 0x63].map((c) => b64(new Uint8Array(size).fill(c)));
      await s.call("fs/writeFile", { path: file, dataBase64: versions[0] });
      // Requests are handled concurrently by the server; fire them all at once.
      const writes: Promise<unknown>[] = [];
      const reads: Promise<{ dataBase64: string }>[] = [];
      for (let i = 0; i < 12; i++) {
        writes.push(s.call("fs/writeFile", { path: file, dataBase64: versions[i % 3] }));
        for (let j = 0; j < 3; j++) {
          reads.push(s.call("fs/readFile", { path: file }) as Promise<{ dataBase64: string }>);
        }
      }
      await Promise.all(writes);
      const seen = new Set<number>();
      for (const { dataBase64 } of await Promise.all(reads)) {
        const index = versions.indexOf(dataBase64);
        assert.ok(index >= 0, `a read returned ${dataBase64.length} base64 chars of mixed content`);
        seen.add(index);
      }
      assert.ok(seen.size >= 1);
      assert.deepEqual(await fsp.readdir(dir), ["shared"]);
      s.messages.length = 0;
    })
  );
});
