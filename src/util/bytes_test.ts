import assert from "node:assert/strict";
import { concatBytes } from "./bytes.ts";

Deno.test("concatBytes joins parts, with or without the total", () => {
  const parts = [new Uint8Array([1, 2]), new Uint8Array([]), new Uint8Array([3])];
  assert.deepEqual(concatBytes(parts), new Uint8Array([1, 2, 3]));
  assert.deepEqual(concatBytes(parts, 3), new Uint8Array([1, 2, 3]));
  assert.deepEqual(concatBytes([]), new Uint8Array([]));
});

Deno.test("concatBytes returns a single part as it is", () => {
  const only = new Uint8Array([9]);
  assert.equal(concatBytes([only]), only);
});
