import assert from "node:assert/strict";
import { PayloadPool } from "./payload_pool.ts";

Deno.test("PayloadPool: a payload given back carries the next one", () => {
  const pool = new PayloadPool(1024, 2);
  const a = pool.take(100);
  assert.equal(a.byteLength, 100);
  assert.equal(a.byteOffset, 0);
  assert.equal(a.buffer.byteLength, 1024);
  assert.equal(pool.freeSlots, 0);
  assert.equal(pool.give(a), true);
  assert.equal(pool.freeSlots, 1);
  const b = pool.take(1024);
  assert.equal(b.buffer, a.buffer);
  assert.equal(b.byteLength, 1024);
  assert.equal(pool.freeSlots, 0);
});

Deno.test("PayloadPool: refuses what it did not hand out, and what it was given already", () => {
  const pool = new PayloadPool(1024, 2);
  assert.equal(pool.give(new Uint8Array(100)), false);
  const a = pool.take(10);
  assert.equal(pool.give(a), true);
  assert.equal(pool.give(a), false, "given twice");
  assert.equal(pool.freeSlots, 1);
  // Payloads over a slot, and empty ones, are not pooled.
  const big = pool.take(1025);
  assert.equal(big.byteLength, 1025);
  assert.equal(pool.give(big), false);
  assert.equal(pool.give(pool.take(0)), false);
});

Deno.test("PayloadPool: keeps at most `keep` free buffers; the rest go to the collector", () => {
  const pool = new PayloadPool(64, 2);
  const taken = [pool.take(64), pool.take(64), pool.take(64)];
  assert.equal(new Set(taken.map((t) => t.buffer)).size, 3);
  assert.deepEqual(taken.map((t) => pool.give(t)), [true, true, false]);
  assert.equal(pool.freeSlots, 2);
});

Deno.test("PayloadPool: an adopted buffer is freed (detached) when its payload is given back", () => {
  const pool = new PayloadPool(1024, 2);
  const message = new ArrayBuffer(4096);
  pool.adopt(message);
  const payload = new Uint8Array(message, 10, 4000);
  assert.equal(pool.give(payload), true);
  assert.equal(message.byteLength, 0, "detached");
  assert.equal(pool.freeSlots, 0, "not pooled");
  assert.equal(pool.give(payload), false, "given twice");
  // A buffer that was not adopted is left alone.
  const other = new ArrayBuffer(4096);
  assert.equal(pool.give(new Uint8Array(other)), false);
  assert.equal(other.byteLength, 4096);
});
