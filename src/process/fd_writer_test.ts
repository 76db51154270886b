import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  closeSync,
  constants as fsConstants,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
} from "node:fs";
import { constants } from "node:os";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FdWriteError, FdWriter, nodeWriteOnce, WriterCancelledError } from "./fd_writer.ts";

const EAGAIN = constants.errno.EAGAIN;

/**
 * A descriptor in memory: takes at most `room` bytes, answers -EAGAIN
 * when full, and records every byte in order.
 */
function fakeFd(room: number) {
  const fd = {
    room,
    received: [] as number[],
    calls: 0,
    writeOnce: (_fd: number, bytes: Uint8Array): number => {
      fd.calls++;
      if (fd.room === 0) return -EAGAIN;
      const n = Math.min(fd.room, bytes.length);
      fd.received.push(...bytes.subarray(0, n));
      fd.room -= n;
      return n;
    },
  };
  return fd;
}

Deno.test("FdWriter: with room, a write goes out before write() returns", async () => {
  const fd = fakeFd(1000);
  const w = new FdWriter(3, fd.writeOnce);
  const done = w.write(new Uint8Array([1, 2, 3]));
  assert.deepEqual(fd.received, [1, 2, 3]);
  await done;
  assert.equal(w.pendingBytes, 0);
});

Deno.test("FdWriter: a full descriptor makes writes wait; partial writes continue exactly once, in order", async () => {
  const fd = fakeFd(100);
  const w = new FdWriter(3, fd.writeOnce);
  let done = 0;
  const a = w.write(new Uint8Array(300).fill(1)).then(() => done++);
  const b = w.write(new Uint8Array(200).fill(2)).then(() => done++);
  assert.equal(fd.received.length, 100, "the first part went out at once");
  assert.equal(w.pendingBytes, 400);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(done, 0, "nothing completes while the descriptor is full");
  const callsWhileFull = fd.calls;
  assert.ok(
    callsWhileFull < 20,
    `retried on a backing-off timer, not in a loop (${callsWhileFull})`,
  );
  // The reader makes room, a little at a time.
  for (let i = 0; i < 200 && done < 2; i++) {
    fd.room += 37;
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all([a, b]);
  assert.deepEqual(fd.received, [...new Array(300).fill(1), ...new Array(200).fill(2)]);
});

Deno.test("FdWriter: cancel rejects what is queued and every later write", async () => {
  const fd = fakeFd(0);
  const w = new FdWriter(3, fd.writeOnce);
  const pending = w.write(new Uint8Array(100));
  assert.equal(w.pendingBytes, 100);
  w.cancel("the process exited");
  await assert.rejects(pending, WriterCancelledError);
  await assert.rejects(w.write(new Uint8Array(1)), /write cancelled: the process exited/);
  const calls = fd.calls;
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(fd.calls, calls, "no retry after cancel");
});

Deno.test("FdWriter: a failed write rejects with the errno's name and cancels the rest", async () => {
  const w = new FdWriter(3, () => -constants.errno.EIO);
  const first = w.write(new Uint8Array(5));
  await assert.rejects(first, (err) => err instanceof FdWriteError && err.code === "EIO");
  await assert.rejects(w.write(new Uint8Array(1)), /an earlier write failed: EIO/);
});

Deno.test("FdWriter: a real FIFO with room takes the write at once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fd-writer-"));
  const path = join(dir, "fifo");
  assert.equal(spawnSync("mkfifo", [path]).status, 0);
  const reader = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  const writer = openSync(path, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
  try {
    const w = new FdWriter(writer, nodeWriteOnce);
    const done = w.write(new Uint8Array(100).fill(5));
    const buf = new Uint8Array(200);
    assert.equal(readSync(reader, buf), 100, "written synchronously");
    assert.ok(buf.subarray(0, 100).every((b) => b === 5));
    await done;
  } finally {
    closeSync(reader);
    closeSync(writer);
    rmSync(dir, { recursive: true });
  }
});
