import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { type FenceWrite, OutputFence } from "./output_fence.ts";

/** A terminal that takes `room` bytes, then answers EAGAIN (or `fail`). */
function terminal(room: number, fail?: string) {
  const got: number[] = [];
  const write: FenceWrite = (_fd, data, offset, length) => {
    if (got.length >= room) {
      throw Object.assign(new Error("no room"), { code: fail ?? "EAGAIN" });
    }
    got.push(...data.subarray(offset, offset + length));
    return length;
  };
  return { got, write, grow: (n: number) => room += n };
}

Deno.test("OutputFence writes the whole marker, resuming after EAGAIN", () => {
  const t = terminal(5);
  const fence = new OutputFence(7, t.write);
  assert.equal(fence.push(), "blocked");
  assert.equal(fence.written, 5);
  t.grow(1000);
  assert.equal(fence.push(), "written");
  assert.deepEqual(Buffer.from(t.got), fence.marker);
  assert.equal(fence.marker[0], 0x1b);
  assert.match(fence.marker.subarray(1).toString(), /^\[[0-9A-F]{24}Z$/);
});

Deno.test("OutputFence reports a write that fails for good", () => {
  const fence = new OutputFence(7, terminal(0, "EIO").write);
  assert.equal(fence.push(), "failed");
});

Deno.test("OutputFence finds the marker split across chunks", () => {
  const fence = new OutputFence(7, terminal(1000).write);
  const m = fence.marker;
  const out: string[] = [];
  const feed = (b: Uint8Array) => {
    const r = fence.scan(b);
    if (r.output) out.push(Buffer.from(r.output).toString());
    return r.found;
  };
  assert.equal(feed(Buffer.concat([Buffer.from("hello "), m.subarray(0, 5)])), false);
  assert.equal(feed(m.subarray(5, 10)), false);
  assert.equal(feed(Buffer.concat([m.subarray(10), Buffer.from("after")])), true);
  assert.equal(out.join(""), "hello ");
});

Deno.test("OutputFence gives back what it held when the marker never comes", () => {
  const fence = new OutputFence(7, terminal(1000).write);
  const r = fence.scan(Buffer.from("abc"));
  assert.equal(r.output, undefined);
  assert.equal(Buffer.from(fence.takeCarry()!).toString(), "abc");
  assert.equal(fence.takeCarry(), undefined);
});
