import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeInPlace } from "./write_in_place.ts";

/** Run `fn` with a fresh temporary directory. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "write-in-place-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

Deno.test("writeInPlace: appends issued together land in the order they were issued", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "log.bin");
    // Pieces of different sizes, so that a later small one would overtake.
    const pieces = Array.from(
      { length: 40 },
      (_, i) => new Uint8Array(i % 2 === 0 ? 256 * 1024 : 7).fill(i),
    );
    await Promise.all(pieces.map((p) => writeInPlace(path, p, { kind: "append" })));
    const got = new Uint8Array(await readFile(path));
    let at = 0;
    for (const [i, p] of pieces.entries()) {
      // Checked byte by byte, not with deepEqual: the diff of two 256 KiB
      // arrays that differ takes gigabytes to print.
      const place = got.subarray(at, at + p.byteLength);
      assert.ok(place.every((b) => b === i), `piece ${i} is not at byte ${at}`);
      at += p.byteLength;
    }
    assert.equal(at, got.byteLength);
  });
});

Deno.test("writeInPlace: a failed write does not hold up the next ones to its path", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "later/file.bin");
    const first = writeInPlace(path, new Uint8Array([1]), { kind: "at", offset: 0 });
    await assert.rejects(first, /no such file or directory/);
    await mkdir(join(dir, "later"));
    await writeInPlace(path, new Uint8Array([2, 3]), { kind: "at", offset: 1 });
    assert.deepEqual(new Uint8Array(await readFile(path)), new Uint8Array([0, 2, 3]));
  });
});
