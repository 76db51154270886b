import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fsp from "node:fs/promises";
import { tmpdir } from "node:os";
import { LocalFileSystem } from "./local.ts";
import { FileSystemError } from "./types.ts";
import { concatBytes } from "../util/bytes.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const fs = new LocalFileSystem({ maxReadFileBytes: 1024 });

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await fsp.mkdtemp(`${tmpdir()}/fs-streams-test-`);
  try {
    await fn(dir);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

async function failure(promise: Promise<unknown>): Promise<FileSystemError> {
  const err = await promise.then(() => assert.fail("should reject"), (e) => e);
  assert.ok(err instanceof FileSystemError, String(err));
  return err;
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

Deno.test("readRange: offset, length, size and eof", async () => {
  await withTempDir(async (dir) => {
    await fsp.writeFile(`${dir}/f`, "0123456789");
    const r = await fs.readRange(`${dir}/f`, { offset: 2, length: 3 });
    assert.deepEqual([dec.decode(r.data), r.size, r.eof], ["234", 10, false]);
    const end = await fs.readRange(`${dir}/f`, { offset: 7, length: 3 });
    assert.deepEqual([dec.decode(end.data), end.size, end.eof], ["789", 10, true]);
    const short = await fs.readRange(`${dir}/f`, { offset: 8, length: 100 });
    assert.deepEqual([dec.decode(short.data), short.size, short.eof], ["89", 10, true]);
    const past = await fs.readRange(`${dir}/f`, { offset: 50, length: 5 });
    assert.deepEqual([past.data.byteLength, past.size, past.eof], [0, 10, true]);
    const rest = await fs.readRange(`${dir}/f`, { offset: 4 });
    assert.deepEqual([dec.decode(rest.data), rest.eof], ["456789", true]);
    const none = await fs.readRange(`${dir}/f`, { offset: 3, length: 0 });
    assert.deepEqual([none.data.byteLength, none.eof], [0, false]);
    await fsp.writeFile(`${dir}/big`, new Uint8Array(2000));
    // Over the limit in one piece: a bad length, or (without one) too large a rest.
    assert.equal((await failure(fs.readRange(`${dir}/big`, { length: 1025 }))).errno, "EINVAL");
    const tooMuch = await failure(fs.readRange(`${dir}/big`, { offset: 100 }));
    assert.equal(tooMuch.errno, "EFBIG");
    assert.match(tooMuch.message, /1900 bytes from offset 100 are over the read limit of 1024/);
    assert.equal((await fs.readRange(`${dir}/big`, { offset: 1500 })).data.byteLength, 500);
    assert.equal((await failure(fs.readRange(dir, { length: 1 }))).errno, "EISDIR");
    assert.equal((await failure(fs.readRange(`${dir}/nope`, { length: 1 }))).errno, "ENOENT");
  });
});

Deno.test("readRange of a /proc file (size 0) ends only at a short read", async () => {
  const unlimited = new LocalFileSystem();
  const first = await unlimited.readRange("/proc/self/status", { offset: 0, length: 16 });
  assert.equal(first.data.byteLength, 16);
  assert.equal(first.size, 16);
  assert.equal(first.eof, false);
  const rest = await unlimited.readRange("/proc/self/status", { offset: 16, length: 1 << 20 });
  assert.equal(rest.eof, true);
});

Deno.test("writeFile with append or offset writes in place", async () => {
  await withTempDir(async (dir) => {
    const f = `${dir}/log`;
    await fs.writeFile(f, enc.encode("one\n"), { append: true });
    await fs.writeFile(f, enc.encode("two\n"), { append: true });
    assert.equal(await fsp.readFile(f, "utf8"), "one\ntwo\n");
    await fs.writeFile(f, enc.encode("ONE"), { offset: 0 });
    await fs.writeFile(f, enc.encode("!"), { offset: 10 });
    assert.equal(await fsp.readFile(f, "utf8"), "ONE\ntwo\n\0\0!");
    await fs.writeFile(`${dir}/new`, new Uint8Array(0), { offset: 0 });
    assert.equal((await fsp.stat(`${dir}/new`)).size, 0);
    assert.equal(
      (await failure(fs.writeFile(dir, enc.encode("x"), { append: true }))).errno,
      "EISDIR",
    );
    assert.equal(
      (await failure(fs.writeFile(`${dir}/a/b`, enc.encode("x"), { offset: 0 }))).errno,
      "ENOENT",
    );
    execFileSync("mkfifo", [`${dir}/fifo`]);
    const fifo = await failure(fs.writeFile(`${dir}/fifo`, enc.encode("x"), { append: true }));
    assert.ok(["ENXIO", "EINVAL"].includes(fifo.errno!), fifo.message);
    const both = await failure(fs.writeFile(f, enc.encode("x"), { append: true, offset: 1 }));
    assert.equal(both.kind, "invalidInput");
  });
});

Deno.test("rename: atomic move, errors name both paths, EXDEV across filesystems", async () => {
  await withTempDir(async (dir) => {
    await fsp.writeFile(`${dir}/a`, "A");
    await fsp.writeFile(`${dir}/b`, "B");
    await fs.rename(`${dir}/a`, `${dir}/b`);
    assert.equal(await fsp.readFile(`${dir}/b`, "utf8"), "A");
    await assert.rejects(fsp.stat(`${dir}/a`));
    await fsp.mkdir(`${dir}/d`);
    const isDir = await failure(fs.rename(`${dir}/b`, `${dir}/d`));
    assert.equal(isDir.errno, "EISDIR");
    assert.equal(isDir.message, `rename ${dir}/b to ${dir}/d: is a directory`);
    assert.equal((await failure(fs.rename(`${dir}/gone`, `${dir}/x`))).errno, "ENOENT");
    const into = await failure(fs.rename(`${dir}/d`, `${dir}/d/inner`));
    assert.equal(into.kind, "invalidInput");
    if (await fsp.stat("/dev/shm").then(() => true, () => false)) {
      const xdev = await failure(fs.rename(`${dir}/b`, `/dev/shm/fs-streams-test-${Deno.pid}`));
      assert.equal(xdev.errno, "EXDEV");
      assert.equal(await fsp.readFile(`${dir}/b`, "utf8"), "A", "nothing was copied or moved");
    }
  });
});

Deno.test("readStream: chunks of the asked size, errors through the stream", async () => {
  await withTempDir(async (dir) => {
    const data = new Uint8Array(10_000).map((_, i) => i & 255);
    await fsp.writeFile(`${dir}/f`, data);
    const chunks = await collect(fs.readStream(`${dir}/f`, { chunkBytes: 4096 }));
    assert.deepEqual(chunks.map((c) => c.byteLength), [4096, 4096, 1808]);
    assert.deepEqual(concatBytes(chunks), data);
    // Larger than the read limit: a stream is not bound by it.
    assert.equal((await collect(fs.readStream(`${dir}/f`))).length, 1);
    for (const [path, errno] of [[`${dir}/nope`, "ENOENT"], [dir, "EISDIR"], ["rel", "EINVAL"]]) {
      const err = await failure(collect(fs.readStream(path)));
      assert.equal(err.errno, errno, err.message);
    }
    assert.throws(() => fs.readStream(`${dir}/f`, { chunkBytes: 0 }), RangeError);
    const reader = fs.readStream(`${dir}/f`, { chunkBytes: 10 }).getReader();
    await reader.read();
    await reader.cancel(); // closes the file
  });
});

Deno.test("writeStream: temp file beside the target, renamed into place on close", async () => {
  await withTempDir(async (dir) => {
    await fsp.writeFile(`${dir}/f`, "old");
    const writer = fs.writeStream(`${dir}/f`, { chunkBytes: 5 }).getWriter();
    await writer.write(enc.encode("new "));
    await writer.write(enc.encode("content, in parts"));
    const during = await fsp.readdir(dir);
    assert.equal(await fsp.readFile(`${dir}/f`, "utf8"), "old", "unchanged until close");
    assert.ok(during.some((n) => /^\.f\.[0-9a-f]{12}\.partial$/.test(n)), during.join());
    await writer.close();
    assert.equal(await fsp.readFile(`${dir}/f`, "utf8"), "new content, in parts");
    assert.deepEqual(await fsp.readdir(dir), ["f"]);
    await new Blob([]).stream().pipeTo(fs.writeStream(`${dir}/empty`));
    assert.equal((await fsp.stat(`${dir}/empty`)).size, 0);
  });
});

Deno.test("writeStream: abort and failures leave neither the file nor a temp file", async () => {
  await withTempDir(async (dir) => {
    const aborted = fs.writeStream(`${dir}/a`).getWriter();
    await aborted.write(new Uint8Array(3 << 20));
    await aborted.abort(new Error("changed my mind"));
    const bad = fs.writeStream(`${dir}/b`).getWriter();
    await bad.write(enc.encode("x"));
    await assert.rejects(bad.write("text" as unknown as Uint8Array), TypeError);
    assert.deepEqual(await fsp.readdir(dir), []);
    await fsp.mkdir(`${dir}/d`);
    const isDir = await failure(writeAll(`${dir}/d`));
    assert.deepEqual([isDir.errno, isDir.message], [
      "EISDIR",
      `writeFile ${dir}/d: is a directory`,
    ]);
    assert.equal((await failure(writeAll(`${dir}/none/f`))).errno, "ENOENT");
    assert.equal((await failure(writeAll(`${dir}/slash/`))).errno, "EISDIR");
    execFileSync("mkfifo", [`${dir}/fifo`]);
    assert.equal((await failure(writeAll(`${dir}/fifo`))).errno, "EINVAL");
    assert.deepEqual((await fsp.readdir(dir)).sort(), ["d", "fifo"]);
  });
});

function writeAll(path: string): Promise<void> {
  return new Blob([enc.encode("data")]).stream().pipeTo(fs.writeStream(path));
}
