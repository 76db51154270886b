import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  dropRange,
  WRITE_BEHIND_LAG_BYTES,
  WRITE_BEHIND_MIN_BYTES,
  writeBehind,
} from "./write_behind.ts";

const MiB = 1024 * 1024;
const linux = process.platform === "linux";

/** Bytes of `path` in the page cache (util-linux `fincore`). */
function cachedBytes(path: string): number {
  return Number(execFileSync("fincore", ["-b", "-n", "-o", "RES", path], { encoding: "utf8" }));
}

Deno.test("dropRange: nothing early in a file, then twice the piece, LAG behind its end", () => {
  assert.deepEqual(dropRange(MiB, MiB), { offset: 0, length: 0 });
  assert.deepEqual(dropRange(WRITE_BEHIND_LAG_BYTES, MiB), { offset: 0, length: 0 });
  assert.deepEqual(dropRange(WRITE_BEHIND_LAG_BYTES + MiB, MiB), { offset: 0, length: MiB });
  assert.deepEqual(dropRange(16 * MiB, MiB), { offset: 6 * MiB, length: 2 * MiB });
  assert.deepEqual(dropRange(100 * MiB, 256 * 1024), {
    offset: 100 * MiB - WRITE_BEHIND_LAG_BYTES - 512 * 1024,
    length: 512 * 1024,
  });
});

Deno.test({
  name: "writeBehind: clean pages LAG behind leave the cache; small pieces are left alone",
  ignore: !linux,
  fn: async () => {
    const dir = await mkdtemp(join(tmpdir(), "write-behind-"));
    const path = join(dir, "file.bin");
    const handle = await open(path, "w");
    try {
      await handle.write(new Uint8Array(16 * MiB).fill(7), 0, 16 * MiB, 0);
      // Clean now: only clean pages can leave the cache.
      await handle.sync();
      assert.equal(cachedBytes(path), 16 * MiB);
      assert.equal(await writeBehind(handle.fd, 15 * MiB, WRITE_BEHIND_MIN_BYTES - 1), false);
      assert.equal(cachedBytes(path), 16 * MiB, "a small piece changes nothing");
      // This test runs under Deno with --allow-ffi (the FFI path).
      assert.equal(await writeBehind(handle.fd, 15 * MiB, MiB), true);
      assert.equal(cachedBytes(path), 14 * MiB, "[6, 8) MiB dropped");
      assert.equal(await writeBehind(-1, 15 * MiB, MiB), false, "a bad fd: false, no throw");
    } finally {
      await handle.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
});
