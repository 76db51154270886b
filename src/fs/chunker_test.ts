import assert from "node:assert/strict";
import { checkChunkBytes, Chunker, MAX_CHUNK_BYTES, requireBytes } from "./chunker.ts";

const bytes = (...values: number[]) => new Uint8Array(values);

Deno.test("Chunker gathers small chunks into full pieces and keeps the rest", () => {
  const c = new Chunker(4);
  assert.deepEqual(c.push(bytes(1, 2, 3)), []);
  assert.equal(c.pendingBytes, 3);
  assert.deepEqual(c.push(bytes(4, 5)), [bytes(1, 2, 3, 4)]);
  assert.deepEqual(c.push(bytes(6, 7, 8, 9, 10, 11, 12, 13)), [
    bytes(5, 6, 7, 8),
    bytes(9, 10, 11, 12),
  ]);
  assert.deepEqual(c.flush(), bytes(13));
  assert.deepEqual(c.flush(), bytes());
  assert.equal(c.pendingBytes, 0);
});

Deno.test("Chunker cuts a large chunk into views without copying, and copies what it keeps", () => {
  const c = new Chunker(3);
  const big = bytes(1, 2, 3, 4, 5, 6, 7);
  const pieces = c.push(big);
  assert.deepEqual(pieces, [bytes(1, 2, 3), bytes(4, 5, 6)]);
  assert.equal(pieces[0].buffer, big.buffer, "a full piece is a view of the chunk");
  big[6] = 99; // the producer reuses its buffer
  assert.deepEqual(c.flush(), bytes(7), "kept bytes were copied");
});

Deno.test("Chunker refuses what is not bytes, and bad sizes", () => {
  assert.throws(() => new Chunker(0), /piece size must be a positive integer, got 0/);
  assert.throws(() => new Chunker(4).push("text" as unknown as Uint8Array), /got string/);
  assert.throws(() => requireBytes([1, 2]), /Uint8Array chunks, got Array/);
  assert.throws(() => requireBytes(null), /got null/);
  assert.equal(checkChunkBytes(undefined, 7), 7);
  assert.equal(checkChunkBytes(MAX_CHUNK_BYTES, 7), MAX_CHUNK_BYTES);
  assert.throws(() => checkChunkBytes(0, 7), /chunkBytes must be an integer from 1 to \d+, got 0/);
  assert.throws(() => checkChunkBytes(MAX_CHUNK_BYTES + 1, 7), /chunkBytes/);
});
