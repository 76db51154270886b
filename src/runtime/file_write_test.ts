import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { mkdtemp, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WRITE_SLICE_BYTES, writeAll, writeOnce } from "./file_write.ts";

/** Run `fn` with a fresh temporary directory. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "file-write-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

Deno.test("writeOnce: at a position, at the file's position, and appended", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "f.bin");
    const data = new Uint8Array(64).map((_, i) => i);
    const handle = await open(path, "w+");
    try {
      // A view into the middle of a buffer: its own bytes are written, not the buffer's start.
      assert.equal(await writeOnce(handle, data.subarray(10, 20), 100), 10);
      // The file's position stays 0 after a positional write.
      assert.equal(await writeOnce(handle, data.subarray(0, 4), null), 4);
    } finally {
      await handle.close();
    }
    const appending = await open(path, "a");
    try {
      assert.equal(await writeOnce(appending, data.subarray(60), 0), 4);
    } finally {
      await appending.close();
    }
    const got = new Uint8Array(await readFile(path));
    assert.equal(got.byteLength, 114);
    assert.deepEqual(got.subarray(0, 4), data.subarray(0, 4));
    assert.deepEqual(got.subarray(4, 100), new Uint8Array(96));
    assert.deepEqual(got.subarray(100, 110), data.subarray(10, 20));
    // O_APPEND puts the bytes at the end whatever the position (Linux).
    assert.deepEqual(got.subarray(110), data.subarray(60));
  });
});

Deno.test("writeOnce: a write that fails fails as node:fs reports it", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "read-only.bin");
    await (await open(path, "w")).close();
    const handle = await open(path, "r");
    try {
      await assert.rejects(writeOnce(handle, new Uint8Array([1, 2, 3]), 0), { code: "EBADF" });
    } finally {
      await handle.close();
    }
  });
});

Deno.test("writeOnce: more than a slice goes in slices, and arrives whole", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "big.bin");
    const data = new Uint8Array(WRITE_SLICE_BYTES * 2 + 3).map((_, i) => (i * 7) & 0xff);
    const handle = await open(path, "w");
    try {
      let done = 0;
      while (done < data.byteLength) {
        const n = await writeOnce(handle, data.subarray(done), done);
        assert.ok(n > 0 && n <= WRITE_SLICE_BYTES, `one call wrote ${n} bytes`);
        done += n;
      }
    } finally {
      await handle.close();
    }
    // Compared whole, not with deepEqual: its diff of two big arrays takes gigabytes to print.
    assert.ok(Buffer.from(await readFile(path)).equals(data), "the bytes differ");
  });
});

Deno.test("writeAll: all of it, from the position on, in as many calls as it takes", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "all.bin");
    const data = new Uint8Array(WRITE_SLICE_BYTES * 3 + 5).map((_, i) => (i * 13) & 0xff);
    const handle = await open(path, "w");
    try {
      await writeAll(handle, data, 10);
    } finally {
      await handle.close();
    }
    const got = Buffer.from(await readFile(path));
    assert.equal(got.byteLength, data.byteLength + 10);
    assert.ok(got.subarray(0, 10).equals(new Uint8Array(10)), "the hole before the position");
    assert.ok(got.subarray(10).equals(data), "the bytes differ");
  });
});
