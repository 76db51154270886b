import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FdWriter, WriterCancelledError } from "./fd_writer.ts";

/** A FIFO opened non-blocking at both ends, its 64 KiB buffer already full. */
function fullFifo(): { reader: number; writer: number; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "fd-writer-"));
  const path = join(dir, "fifo");
  assert.equal(spawnSync("mkfifo", [path]).status, 0);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  const filler = new Uint8Array(4096).fill(0);
  while (true) {
    try {
      if (writeSync(writer, filler) < filler.length) break;
    } catch {
      break; // EAGAIN: full
    }
  }
  return {
    reader,
    writer,
    cleanup() {
      closeSync(reader);
      closeSync(writer);
      rmSync(dir, { recursive: true });
    },
  };
}

/** Read what is there now (EAGAIN reads as nothing). */
function drain(fd: number): number[] {
  const out: number[] = [];
  const buf = new Uint8Array(65536);
  while (true) {
    let n: number;
    try {
      n = readSync(fd, buf);
    } catch (err) {
      if ((err as { code?: string }).code === "EAGAIN") break;
      throw err;
    }
    if (n <= 0) break;
    for (let i = 0; i < n; i++) out.push(buf[i]);
  }
  return out;
}

Deno.test("FdWriter: a full descriptor makes writes wait, in order, exactly once", async () => {
  const f = fullFifo();
  try {
    const w = new FdWriter(f.writer);
    let done = 0;
    const a = w.write(new Uint8Array(300).fill(1)).then(() => done++);
    const b = w.write(new Uint8Array(200).fill(2)).then(() => done++);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(done, 0, "wrote into a full descriptor");
    const received: number[] = [];
    // The event loop runs while the writes wait; reading makes room.
    for (let i = 0; i < 500 && done < 2; i++) {
      received.push(...drain(f.reader).filter((x) => x !== 0));
      await new Promise((r) => setTimeout(r, 2));
    }
    await Promise.all([a, b]);
    received.push(...drain(f.reader).filter((x) => x !== 0));
    assert.deepEqual(received, [...new Array(300).fill(1), ...new Array(200).fill(2)]);
  } finally {
    f.cleanup();
  }
});

Deno.test("FdWriter: cancel rejects what is queued and every later write", async () => {
  const f = fullFifo();
  try {
    const w = new FdWriter(f.writer);
    const pending = w.write(new Uint8Array(100));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(w.pendingBytes, 100);
    w.cancel("the process exited");
    await assert.rejects(pending, WriterCancelledError);
    await assert.rejects(w.write(new Uint8Array(1)), /write cancelled: the process exited/);
  } finally {
    f.cleanup();
  }
});

Deno.test("FdWriter: a write in flight when cancelled settles by what it wrote", async () => {
  const f = fullFifo();
  try {
    // Room for the write: it goes out at once, and cancel() comes while it
    // is in flight (a fast child answered and exited before its callback).
    drain(f.reader);
    const w = new FdWriter(f.writer);
    // One byte: under Deno the writer hands over a byte per call.
    const inFlight = w.write(new Uint8Array([7]));
    const queued = assert.rejects(w.write(new Uint8Array([1])), WriterCancelledError);
    w.cancel("the process exited");
    await inFlight;
    await queued;
    assert.deepEqual(drain(f.reader), [7]);
  } finally {
    f.cleanup();
  }
});
