import assert from "node:assert/strict";
import { FileSystemError, type ReadRangeResult } from "../fs/types.ts";
import { remoteReadStream } from "./remote_read_stream.ts";
import { remoteWriteStream, type WriteStreamCalls } from "./remote_write_stream.ts";

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const jitter = () => delay(Math.floor(Math.random() * 4));

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: number[] = [];
  for await (const chunk of stream) parts.push(...chunk);
  return new Uint8Array(parts);
}

/** A fake server file whose ranged reads answer in random order. */
function fakeFile(size: number, opts: { shortAt?: number; failAt?: number } = {}) {
  const data = new Uint8Array(size).map((_, i) => (i * 7) & 255);
  const stats = { inFlight: 0, maxInFlight: 0, calls: [] as number[] };
  const readRange = async (offset: number, length: number): Promise<ReadRangeResult> => {
    stats.calls.push(offset);
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    await jitter();
    stats.inFlight--;
    if (offset === opts.failAt) {
      throw new FileSystemError("io", "EIO", "/f", "readFile /f: input/output error");
    }
    const end = Math.min(size, offset + (offset === opts.shortAt ? length - 1 : length));
    const slice = data.slice(Math.min(offset, size), end);
    return { data: slice, size, eof: offset === opts.shortAt ? false : end >= size };
  };
  return { data, stats, readRange };
}

Deno.test("remote read stream: in order, within the window, one request before the size", async () => {
  const file = fakeFile(1000);
  const stream = remoteReadStream(
    { readRange: file.readRange, readFile: () => assert.fail("no whole read") },
    { pieceBytes: 64, window: 3, check: () => {} },
  );
  assert.deepEqual(await collect(stream), file.data);
  assert.ok(file.stats.maxInFlight <= 3, `${file.stats.maxInFlight} in flight`);
  assert.equal(file.stats.calls[0], 0);
  assert.equal(file.stats.calls.length, Math.ceil(1000 / 64), "no request past the end");
});

Deno.test("remote read stream: a short piece restarts the pipeline where it stopped", async () => {
  const file = fakeFile(500, { shortAt: 128 });
  const stream = remoteReadStream(
    { readRange: file.readRange, readFile: () => assert.fail("no whole read") },
    { pieceBytes: 64, window: 4, check: () => {} },
  );
  assert.deepEqual(await collect(stream), file.data);
});

Deno.test("remote read stream: a failed piece errors the stream; a bad path fails first", async () => {
  const file = fakeFile(1000, { failAt: 256 });
  const stream = remoteReadStream(
    { readRange: file.readRange, readFile: () => assert.fail("no whole read") },
    { pieceBytes: 64, window: 4, check: () => {} },
  );
  await assert.rejects(collect(stream), { errno: "EIO" });
  const refused = remoteReadStream(
    { readRange: file.readRange, readFile: () => assert.fail("no whole read") },
    {
      pieceBytes: 64,
      window: 4,
      check: () => {
        throw new TypeError("bad path");
      },
    },
  );
  await assert.rejects(collect(refused), /bad path/);
});

Deno.test("remote read stream without ranged reads: one whole read, handed on in pieces", async () => {
  const stream = remoteReadStream(
    { readRange: undefined, readFile: () => Promise.resolve(new Uint8Array(10).fill(1)) },
    { pieceBytes: 4, window: 2, check: () => {} },
  );
  const sizes: number[] = [];
  for await (const piece of stream) sizes.push(piece.byteLength);
  assert.deepEqual(sizes, [4, 4, 2]);
});

/** A fake server directory for write streams, with positional writes in random order. */
function fakeDir(opts: { failOffset?: number } = {}) {
  const files = new Map<string, Uint8Array>();
  const log: string[] = [];
  const stats = { inFlight: 0, maxInFlight: 0 };
  const calls: WriteStreamCalls = {
    describe: (target) =>
      Promise.resolve(files.has(target) ? { isDirectory: false, isFile: true } : undefined),
    writeAt: async (path, data, offset) => {
      const copy = data.slice();
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      await jitter();
      stats.inFlight--;
      if (offset === opts.failOffset) {
        log.push("fail");
        throw new FileSystemError("io", "ENOSPC", path, `writeFile ${path}: no space left`);
      }
      const old = files.get(path) ?? new Uint8Array(0);
      const grown = new Uint8Array(Math.max(old.byteLength, offset + copy.byteLength));
      grown.set(old);
      grown.set(copy, offset);
      files.set(path, grown);
      log.push(`write ${offset}`);
    },
    rename: (source, destination) => {
      files.set(destination, files.get(source)!);
      files.delete(source);
      log.push("rename");
      return Promise.resolve();
    },
    remove: (path) => {
      files.delete(path);
      log.push(`remove after ${stats.inFlight} in flight`);
      return Promise.resolve();
    },
    writeFile: (target, data) => {
      files.set(target, data);
      log.push("whole");
      return Promise.resolve();
    },
  };
  return { files, log, stats, calls };
}

const source = new Uint8Array(1000).map((_, i) => (i * 13) & 255);

async function upload(stream: WritableStream<Uint8Array>, chunkBytes = 37): Promise<void> {
  const writer = stream.getWriter();
  for (let at = 0; at < source.byteLength; at += chunkBytes) {
    await writer.write(source.slice(at, at + chunkBytes));
  }
  await writer.close();
}

Deno.test("remote write stream: positional pieces within the window, then one rename", async () => {
  const dir = fakeDir();
  await upload(
    remoteWriteStream(dir.calls, "/srv/f", {
      pieceBytes: 64,
      window: 3,
      maxBufferedBytes: undefined,
    }),
  );
  assert.deepEqual(dir.files.get("/srv/f"), source);
  assert.deepEqual([...dir.files.keys()], ["/srv/f"], "no temp file left");
  assert.ok(dir.stats.maxInFlight <= 3, `${dir.stats.maxInFlight} in flight`);
  assert.equal(dir.log.at(-1), "rename");
  assert.equal(dir.log.filter((l) => l === "rename").length, 1);
});

Deno.test("remote write stream: a failed piece removes the temp file once nothing is in flight", async () => {
  const dir = fakeDir({ failOffset: 320 });
  const err = await upload(
    remoteWriteStream(dir.calls, "/srv/f", {
      pieceBytes: 64,
      window: 4,
      maxBufferedBytes: undefined,
    }),
  ).then(() => assert.fail("should fail"), (e) => e);
  assert.ok(err instanceof FileSystemError);
  assert.equal(err.errno, "ENOSPC");
  assert.equal(err.message, "writeFile /srv/f: no space left on device", "names the target");
  assert.deepEqual([...dir.files.keys()], []);
  assert.ok(dir.log.includes("remove after 0 in flight"), dir.log.join());
  assert.ok(!dir.log.includes("rename"));
});

Deno.test("remote write stream: abort removes the temp file and leaves the target", async () => {
  const dir = fakeDir();
  dir.files.set("/srv/f", new Uint8Array([1]));
  const writer = remoteWriteStream(dir.calls, "/srv/f", {
    pieceBytes: 64,
    window: 4,
    maxBufferedBytes: undefined,
  }).getWriter();
  await writer.write(source);
  await writer.abort(new Error("stop"));
  assert.deepEqual([...dir.files.keys()], ["/srv/f"]);
  assert.deepEqual(dir.files.get("/srv/f"), new Uint8Array([1]));
});

Deno.test("remote write stream without the extensions: one whole write, within the limit", async () => {
  const dir = fakeDir();
  const calls = { ...dir.calls, writeAt: undefined, rename: undefined };
  await upload(
    remoteWriteStream(calls, "/srv/f", { pieceBytes: 64, window: 4, maxBufferedBytes: 5000 }),
  );
  assert.deepEqual(dir.files.get("/srv/f"), source);
  assert.deepEqual(dir.log, ["whole"]);
  const small = await upload(
    remoteWriteStream(calls, "/srv/g", { pieceBytes: 64, window: 4, maxBufferedBytes: 100 }),
  ).then(() => assert.fail("should fail"), (e) => e);
  assert.equal(small.errno, "EFBIG");
  assert.ok(!dir.files.has("/srv/g"));
});
