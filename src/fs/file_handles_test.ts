import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fsp from "node:fs/promises";
import { tmpdir } from "node:os";
import process from "node:process";
import { FileHandleError, type FileHandleLimits, FileHandles } from "./file_handles.ts";
import { FileSystemError } from "./types.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const LIMITS: FileHandleLimits = { maxOpen: 8, maxBytesInFlight: 1 << 20 };

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await fsp.mkdtemp(`${tmpdir()}/file-handles-test-`);
  try {
    await fn(dir);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** The rejection of `promise`, which must be an instance of `type`. */
async function failure<E extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> {
  const err = await promise.then(() => assert.fail("should reject"), (e) => e);
  assert.ok(err instanceof type, String(err));
  return err;
}

const partials = async (dir: string) =>
  (await fsp.readdir(dir)).filter((name) => name.endsWith(".partial"));

Deno.test("FileHandles: read blocks, eof when fewer than len bytes came back", async () => {
  await withTempDir(async (dir) => {
    await fsp.writeFile(`${dir}/f`, "0123456789");
    const handles = new FileHandles(LIMITS);
    await handles.open("r", `${dir}/f`, "read");
    const read = async (offset: number, len: number) => {
      const { bytes, eof } = await handles.readBlock("r", offset, len);
      return [dec.decode(bytes), eof];
    };
    assert.deepEqual(await read(0, 4), ["0123", false]);
    // Exactly to the end: all len bytes came back, so not yet eof.
    assert.deepEqual(await read(6, 4), ["6789", false]);
    assert.deepEqual(await read(8, 4), ["89", true]);
    assert.deepEqual(await read(10, 4), ["", true]);
    assert.deepEqual(await read(500, 1), ["", true]);
    assert.deepEqual(await read(3, 1), ["3", false]);
    // Read handles refuse writes, with the problem the server maps to EBADF.
    const err = await failure(handles.writeBlock("r", 0, enc.encode("x")), FileHandleError);
    assert.equal(err.problem, "notWritable");
    assert.equal(handles.size, 1);
    await handles.close("r");
    assert.equal(handles.size, 0);
    assert.equal(await fsp.readFile(`${dir}/f`, "utf8"), "0123456789");
  });
});

Deno.test("FileHandles: replace with out-of-order, overlapping and sparse blocks", async () => {
  await withTempDir(async (dir) => {
    const target = `${dir}/out`;
    await fsp.writeFile(target, "old contents");
    const handles = new FileHandles(LIMITS);
    await handles.open("w", target, "replace");
    await handles.writeBlock("w", 6, enc.encode("world"));
    await handles.writeBlock("w", 0, enc.encode("hello "));
    // Overlapping: the later block wins where they overlap.
    await handles.writeBlock("w", 4, enc.encode("O_"));
    // Sparse: the gap reads as zeros.
    await handles.writeBlock("w", 14, enc.encode("!"));
    assert.equal(await fsp.readFile(target, "utf8"), "old contents", "unchanged until close");
    assert.equal((await partials(dir)).length, 1);
    const notReadable = await failure(handles.readBlock("w", 0, 1), FileHandleError);
    assert.equal(notReadable.problem, "notReadable");
    await handles.close("w");
    assert.equal(await fsp.readFile(target, "utf8"), "hellO_world\0\0\0!");
    assert.deepEqual(await partials(dir), []);
    // An unknown handle is fine to close, and unknown to everything else.
    await handles.close("w");
    const unknown = await failure(handles.writeBlock("w", 0, enc.encode("x")), FileHandleError);
    assert.equal(unknown.problem, "unknown");
    assert.equal(unknown.handleId, "w");
    assert.equal(
      (await failure(handles.readBlock("nope", 0, 1), FileHandleError)).problem,
      "unknown",
    );
  });
});

Deno.test("FileHandles: a block with eof commits; later blocks are refused", async () => {
  await withTempDir(async (dir) => {
    const target = `${dir}/new.txt`;
    const handles = new FileHandles(LIMITS);
    await handles.open("w", target, "replace");
    await handles.writeBlock("w", 3, enc.encode("def"));
    await handles.writeBlock("w", 0, enc.encode("abc"), true);
    assert.equal(await fsp.readFile(target, "utf8"), "abcdef");
    assert.deepEqual(await partials(dir), []);
    const late = await failure(handles.writeBlock("w", 6, enc.encode("g")), FileHandleError);
    assert.equal(late.problem, "complete");
    assert.match(late.message, /already completed/);
    // The handle stays open until closed; closing it changes nothing.
    assert.equal(handles.size, 1);
    await handles.close("w");
    assert.equal(handles.size, 0);
    assert.equal(await fsp.readFile(target, "utf8"), "abcdef");
  });
});

Deno.test("FileHandles: the replaced file keeps the old file's mode", async () => {
  await withTempDir(async (dir) => {
    const target = `${dir}/f`;
    await fsp.writeFile(target, "old");
    await fsp.chmod(target, 0o640);
    const handles = new FileHandles(LIMITS);
    await handles.open("w", target, "replace");
    await handles.writeBlock("w", 0, enc.encode("new"));
    await handles.close("w");
    assert.equal(await fsp.readFile(target, "utf8"), "new");
    assert.equal((await fsp.stat(target)).mode & 0o7777, 0o640);
    // A new file gets the usual mode for new files (0666 less the umask).
    await handles.open("n", `${dir}/fresh`, "replace");
    await handles.writeBlock("n", 0, enc.encode("x"));
    await handles.close("n");
    const umask = process.umask();
    assert.equal((await fsp.stat(`${dir}/fresh`)).mode & 0o777, 0o666 & ~umask);
  });
});

Deno.test("FileHandles: replace through a final symlink replaces the file it names", async () => {
  await withTempDir(async (dir) => {
    await fsp.mkdir(`${dir}/real`);
    await fsp.writeFile(`${dir}/real/file`, "old");
    await fsp.symlink("real/file", `${dir}/link`);
    const handles = new FileHandles(LIMITS);
    await handles.open("w", `${dir}/link`, "replace");
    // The temporary file is beside the target, not beside the link.
    assert.equal((await partials(`${dir}/real`)).length, 1);
    await handles.writeBlock("w", 0, enc.encode("new"));
    await handles.close("w");
    assert.ok((await fsp.lstat(`${dir}/link`)).isSymbolicLink(), "the link stays a link");
    assert.equal(await fsp.readlink(`${dir}/link`), "real/file");
    assert.equal(await fsp.readFile(`${dir}/real/file`, "utf8"), "new");
    assert.deepEqual([...await partials(dir), ...await partials(`${dir}/real`)], []);
  });
});

Deno.test("FileHandles: directories and fifos are refused, a fifo without hanging", async () => {
  await withTempDir(async (dir) => {
    execFileSync("mkfifo", [`${dir}/fifo`]);
    await fsp.mkdir(`${dir}/sub`);
    const handles = new FileHandles(LIMITS);
    const errno = async (path: string, mode: "read" | "replace") =>
      (await failure(handles.open("h", path, mode), FileSystemError)).errno;
    assert.equal(await errno(`${dir}/sub`, "replace"), "EISDIR");
    assert.equal(await errno(`${dir}/sub/`, "replace"), "EISDIR");
    assert.equal(await errno(`${dir}/fifo`, "replace"), "EINVAL");
    // No writer: a blocking open would wait forever.
    assert.equal(await errno(`${dir}/fifo`, "read"), "EINVAL");
    assert.equal(await errno(`${dir}/sub`, "read"), "EISDIR");
    assert.equal(await errno(`${dir}/missing`, "read"), "ENOENT");
    assert.equal(await errno(`${dir}/no/such/dir/f`, "replace"), "ENOENT");
    assert.equal(handles.size, 0, "a failed open frees its id");
    assert.deepEqual((await fsp.readdir(dir)).sort(), ["fifo", "sub"]);
    assert.deepEqual(await fsp.readdir(`${dir}/sub`), []);
  });
});

Deno.test("FileHandles: discardAll leaves no partial file and the target unchanged", async () => {
  await withTempDir(async (dir) => {
    await fsp.writeFile(`${dir}/keep`, "original");
    await fsp.writeFile(`${dir}/read`, "r");
    const handles = new FileHandles(LIMITS);
    await handles.open("a", `${dir}/keep`, "replace");
    await handles.open("b", `${dir}/created`, "replace");
    await handles.open("c", `${dir}/read`, "read");
    await handles.writeBlock("a", 0, enc.encode("clobbered"));
    // One write still in flight when the table is discarded: it finishes first.
    const inFlight = handles.writeBlock("b", 0, enc.encode("new"));
    assert.equal((await partials(dir)).length, 2);
    await handles.discardAll();
    await inFlight;
    assert.equal(handles.size, 0);
    assert.deepEqual(await partials(dir), []);
    assert.equal(await fsp.readFile(`${dir}/keep`, "utf8"), "original");
    assert.deepEqual((await fsp.readdir(dir)).sort(), ["keep", "read"]);
    assert.equal((await failure(handles.readBlock("c", 0, 1), FileHandleError)).problem, "unknown");
  });
});

Deno.test("FileHandles: a replace still being opened when discarded leaves nothing", async () => {
  await withTempDir(async (dir) => {
    await fsp.writeFile(`${dir}/keep`, "original");
    const handles = new FileHandles(LIMITS);
    const opening = handles.open("a", `${dir}/keep`, "replace");
    await handles.discardAll();
    const err = await failure(opening, FileHandleError);
    assert.equal(err.problem, "unknown");
    assert.equal(handles.size, 0);
    assert.deepEqual(await partials(dir), []);
    assert.equal(await fsp.readFile(`${dir}/keep`, "utf8"), "original");
    // The table works on after a discard.
    await handles.open("a", `${dir}/keep`, "read");
    assert.equal(dec.decode((await handles.readBlock("a", 0, 8)).bytes), "original");
    await handles.close("a");
  });
});

Deno.test("FileHandles: duplicate ids and the maxOpen limit; a failed open frees its slot", async () => {
  await withTempDir(async (dir) => {
    await fsp.writeFile(`${dir}/f`, "x");
    const handles = new FileHandles({ maxOpen: 2, maxBytesInFlight: 1024 });
    await handles.open("a", `${dir}/f`, "read");
    const dup = await failure(handles.open("a", `${dir}/f`, "replace"), FileHandleError);
    assert.equal(dup.problem, "exists");
    assert.match(dup.message, /`a` already exists/);
    // An id being opened is taken too.
    const [first, second] = await Promise.allSettled([
      handles.open("b", `${dir}/f`, "read"),
      handles.open("b", `${dir}/f`, "read"),
    ]);
    assert.equal(first.status, "fulfilled");
    assert.equal(second.status, "rejected");
    assert.equal((second as PromiseRejectedResult).reason.problem, "exists");
    const full = await failure(handles.open("c", `${dir}/f`, "read"), FileHandleError);
    assert.equal(full.problem, "tooMany");
    assert.match(full.message, /at most 2 file handles/);
    await handles.close("b");
    assert.equal(handles.size, 1);
    // A failed open does not hold the slot it took while opening.
    await failure(handles.open("c", `${dir}/missing`, "read"), FileSystemError);
    await failure(handles.open("c", dir, "replace"), FileSystemError);
    assert.equal(handles.size, 1);
    await handles.open("c", `${dir}/f`, "read");
    assert.equal(handles.size, 2);
    assert.equal(
      (await failure(handles.open("d", `${dir}/f`, "read"), FileHandleError)).problem,
      "tooMany",
    );
    await handles.discardAll();
    assert.equal(handles.size, 0);
  });
});

Deno.test("FileHandles: concurrent writes to one handle are applied in order", async () => {
  await withTempDir(async (dir) => {
    const handles = new FileHandles(LIMITS);
    await handles.open("w", `${dir}/f`, "replace");
    // All over the same bytes, issued at once: the last issued must win.
    const writes = Array.from(
      { length: 50 },
      (_, i) => handles.writeBlock("w", 0, enc.encode(`block ${String(i).padStart(2, "0")}`)),
    );
    // And a close issued behind them waits for them all.
    const closed = handles.close("w");
    await Promise.all([...writes, closed]);
    assert.equal(await fsp.readFile(`${dir}/f`, "utf8"), "block 49");
    assert.deepEqual(await partials(dir), []);
  });
});

Deno.test("FileHandles: a small byte budget still serves many concurrent blocks", async () => {
  await withTempDir(async (dir) => {
    const size = 64 * 1024 + 123;
    const data = new Uint8Array(randomBytes(size));
    await fsp.writeFile(`${dir}/f`, data);
    // Each block is larger than the whole budget: they run one at a time.
    const handles = new FileHandles({ maxOpen: 16, maxBytesInFlight: 1000 });
    const block = 4096;
    const ids = Array.from({ length: 8 }, (_, i) => `h${i}`);
    await Promise.all(ids.map((id) => handles.open(id, `${dir}/f`, "read")));
    const reads = ids.flatMap((id) =>
      Array.from(
        { length: Math.ceil(size / block) + 1 },
        (_, i) => handles.readBlock(id, i * block, block).then((r) => ({ id, i, ...r })),
      )
    );
    const results = await Promise.all(reads);
    for (const id of ids) {
      const mine = results.filter((r) => r.id === id).sort((a, b) => a.i - b.i);
      const whole = new Uint8Array(mine.reduce((n, r) => n + r.bytes.byteLength, 0));
      let at = 0;
      for (const r of mine) {
        whole.set(r.bytes, at);
        at += r.bytes.byteLength;
      }
      assert.deepEqual(whole, data, `handle ${id}`);
      assert.deepEqual(mine.map((r) => r.eof).lastIndexOf(false), mine.length - 3);
    }
    // Writes share the same budget.
    await handles.open("w", `${dir}/copy`, "replace");
    const last = Math.ceil(size / block) - 1;
    // Issued last block first.
    await Promise.all(
      Array.from({ length: last + 1 }, (_, k) => last - k).map((i) =>
        handles.writeBlock("w", i * block, data.subarray(i * block, (i + 1) * block))
      ),
    );
    await handles.close("w");
    assert.deepEqual(new Uint8Array(await fsp.readFile(`${dir}/copy`)), data);
    await handles.discardAll();
  });
});

Deno.test("FileHandles: blocks and a close pipelined behind the open wait for it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const handles = new FileHandles({ maxOpen: 4, maxBytesInFlight: 1 << 20 });
    const target = `${dir}/t`;
    // Sent together, as a client that does not wait for the open's answer would.
    const steps = [
      handles.open("w", target, "replace"),
      handles.writeBlock("w", 0, new TextEncoder().encode("piped")),
      handles.close("w"),
    ];
    await Promise.all(steps);
    assert.equal(await Deno.readTextFile(target), "piped");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["t"]);
    // A failed open lets what waited on it fail as for an unknown handle.
    const failed = handles.open("r", `${dir}/missing`, "read").catch((e) => e);
    const read = handles.readBlock("r", 0, 1).catch((e) => e);
    assert.equal((await failed).errno, "ENOENT");
    assert.equal((await read).problem, "unknown");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
