import assert from "node:assert/strict";
import { MERGE_MAX_BYTES, OutputMerge } from "./output_merge.ts";

Deno.test("OutputMerge: copies what it is lent and gives it back merged", () => {
  const merge = new OutputMerge();
  const lent = new Uint8Array([1, 2, 3]);
  merge.add("stdout", lent, () => assert.fail("not full"));
  lent.fill(9); // the backend reuses its buffer
  merge.add("stdout", lent.subarray(0, 2), () => assert.fail("not full"));
  assert.equal(merge.bytes, 5);
  assert.equal(merge.stream, "stdout");
  const taken = merge.take()!;
  assert.deepEqual([...taken.data], [1, 2, 3, 9, 9]);
  assert.equal(taken.stream, "stdout");
  assert.equal(merge.take(), undefined);
  assert.equal(merge.stream, undefined);
});

Deno.test("OutputMerge: grows to the limit, then flushes every full buffer, nothing lost", () => {
  const merge = new OutputMerge();
  const data = new Uint8Array(MERGE_MAX_BYTES * 2 + 1000).map((_, i) => i & 0xff);
  const flushed: number[][] = [];
  merge.add("stderr", data, () => flushed.push([...merge.take()!.data]));
  assert.deepEqual(flushed.map((f) => f.length), [MERGE_MAX_BYTES, MERGE_MAX_BYTES]);
  const rest = merge.take()!;
  assert.equal(rest.data.length, 1000);
  assert.deepEqual([...flushed[0], ...flushed[1], ...rest.data], [...data]);
});

Deno.test("OutputMerge: release empties it; it works again after", () => {
  const merge = new OutputMerge();
  merge.add("stdout", new Uint8Array(MERGE_MAX_BYTES - 1), () => {});
  merge.release();
  assert.equal(merge.bytes, 0);
  merge.add("stdout", new Uint8Array([7]), () => {});
  assert.deepEqual([...merge.take()!.data], [7]);
});
