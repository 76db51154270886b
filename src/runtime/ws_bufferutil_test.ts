import assert from "node:assert/strict";
import { mask, unmask } from "./ws_bufferutil.ts";

const MASK = new Uint8Array([0x12, 0x34, 0x56, 0xf8]);

/** What `ws` does without the helper: a byte at a time. */
function byteWise(source: Uint8Array): Uint8Array {
  return source.map((b, i) => b ^ MASK[i & 3]);
}

/** `length` bytes of a pattern that differs in every position, at `offset` into a bigger buffer. */
function bytesAt(offset: number, length: number): Uint8Array {
  const whole = new Uint8Array(offset + length + 5).map((_, i) => (i * 151 + 7) & 0xff);
  return whole.subarray(offset, offset + length);
}

Deno.test("unmask: equal to the byte-wise result at every alignment and length", () => {
  for (const offset of [0, 1, 2, 3]) {
    for (const length of [0, 1, 3, 4, 5, 7, 8, 31, 32, 33, 1000, 65_537]) {
      const data = bytesAt(offset, length);
      const expected = byteWise(data);
      const before = data.buffer.slice(0);
      unmask(data, MASK);
      assert.deepEqual(data, expected, `offset ${offset}, length ${length}`);
      // Nothing outside the view changed.
      const after = new Uint8Array(data.buffer);
      const old = new Uint8Array(before);
      assert.deepEqual(after.subarray(0, offset), old.subarray(0, offset));
      assert.deepEqual(after.subarray(offset + length), old.subarray(offset + length));
    }
  }
});

Deno.test("mask: equal to the byte-wise result, aligned alike or not, at an output offset", () => {
  for (const from of [0, 1, 2, 3]) {
    for (const to of [0, 1, 2, 3]) {
      for (const length of [0, 2, 4, 9, 48, 4099]) {
        const source = bytesAt(from, length);
        const output = new Uint8Array(length + 16).fill(0xaa);
        mask(source, MASK, output, to, length);
        assert.deepEqual(
          output.subarray(to, to + length),
          byteWise(source),
          `${from}/${to}/${length}`,
        );
        assert.ok(output.subarray(0, to).every((b) => b === 0xaa));
        assert.ok(output.subarray(to + length).every((b) => b === 0xaa));
      }
    }
  }
});

Deno.test("unmask undoes mask", () => {
  const source = bytesAt(1, 10_000);
  const output = new Uint8Array(10_000);
  mask(source, MASK, output, 0, source.length);
  unmask(output, MASK);
  assert.deepEqual(output, source);
});
