import assert from "node:assert/strict";
import {
  fsSupport,
  readPieceBytes,
  REMOTE_READ_BYTES,
  REMOTE_WRITE_BYTES,
  writePieceBytes,
} from "./stream_plan.ts";

Deno.test("fsSupport reads capabilities.fs and the limits; v0 supports nothing", () => {
  assert.deepEqual(fsSupport({}), {
    rangedRead: false,
    append: false,
    writeOffset: false,
    rename: false,
    maxReadFileBytes: undefined,
    maxMessageBytes: undefined,
  });
  const s = fsSupport({
    fs: { rangedRead: true, append: true, writeOffset: true, rename: true },
    limits: { maxReadFileBytes: 100, maxMessageBytes: "x" },
  });
  assert.equal(s.rangedRead && s.append && s.writeOffset && s.rename, true);
  assert.equal(s.maxReadFileBytes, 100);
  assert.equal(s.maxMessageBytes, undefined);
  assert.equal(fsSupport(undefined).rename, false);
});

Deno.test("readPieceBytes stays within the read limit and the requested size", () => {
  assert.equal(readPieceBytes(undefined, undefined), REMOTE_READ_BYTES);
  assert.equal(readPieceBytes(undefined, 1000), 1000);
  assert.equal(readPieceBytes(64, 1000), 64);
  assert.equal(readPieceBytes(64, 0), 1);
  assert.throws(() => readPieceBytes(0, 1000), RangeError);
});

Deno.test("writePieceBytes fits base64, path and envelope into the message limit", () => {
  assert.equal(writePieceBytes(undefined, undefined, "/x"), REMOTE_WRITE_BYTES);
  const limit = 64 * 1024;
  const piece = writePieceBytes(undefined, limit, "/tmp/x");
  assert.ok(piece % 3 === 0 && Math.ceil(piece / 3) * 4 + 1024 + 6 * 6 <= limit, `${piece}`);
  assert.equal(writePieceBytes(10, limit, "/tmp/x"), 10);
  assert.equal(writePieceBytes(undefined, 100, "/tmp/x"), 3, "never below 3 bytes");
});
