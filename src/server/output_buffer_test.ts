import assert from "node:assert/strict";
import { OutputBuffer, type OutputSlice } from "./output_buffer.ts";

const bytes = (n: number, fill = 0x61): Uint8Array => new Uint8Array(n).fill(fill);
const seqs = (slice: OutputSlice): number[] => slice.chunks.map((c) => c.seq);

Deno.test("OutputBuffer: empty", () => {
  const buf = new OutputBuffer(100);
  assert.equal(buf.nextSeq, 1);
  assert.equal(buf.firstSeq, 1);
  assert.deepEqual(buf.read(0), { chunks: [], nextSeq: 1, complete: true });
  assert.deepEqual(buf.read(5), { chunks: [], nextSeq: 1, complete: true });
});

Deno.test("OutputBuffer: seqs from 1 shared by all streams; afterSeq is exclusive", () => {
  const buf = new OutputBuffer(100);
  assert.equal(buf.append("stdout", bytes(1)).seq, 1);
  assert.equal(buf.append("stderr", bytes(2)).seq, 2);
  assert.equal(buf.append("stdout", bytes(3)).seq, 3);
  assert.equal(buf.nextSeq, 4);
  assert.equal(buf.retainedBytes, 6);
  const all = buf.read(0);
  assert.deepEqual(seqs(all), [1, 2, 3]);
  assert.deepEqual(all.chunks.map((c) => c.stream), ["stdout", "stderr", "stdout"]);
  assert.equal(all.nextSeq, 4);
  assert.equal(all.complete, true);
  assert.equal(all.evicted, undefined);
  assert.deepEqual(seqs(buf.read(1)), [2, 3]);
  assert.deepEqual(buf.read(3), { chunks: [], nextSeq: 4, complete: true });
  assert.deepEqual(buf.read(40), { chunks: [], nextSeq: 4, complete: true });
});

Deno.test("OutputBuffer: maxBytes stops before the total would exceed it", () => {
  const buf = new OutputBuffer(1000);
  for (const n of [4, 2, 6, 1]) buf.append("stdout", bytes(n));
  const six = buf.read(0, 6);
  assert.deepEqual(seqs(six), [1, 2]);
  assert.equal(six.nextSeq, 3);
  assert.equal(six.complete, false);
  assert.deepEqual(seqs(buf.read(0, 5)), [1]);
  assert.deepEqual(seqs(buf.read(0, 13)), [1, 2, 3, 4]);
  assert.deepEqual(seqs(buf.read(2, 7)), [3, 4]);
});

Deno.test("OutputBuffer: the first chunk is returned whole even beyond maxBytes", () => {
  const buf = new OutputBuffer(1000);
  buf.append("stdout", bytes(50));
  buf.append("stdout", bytes(1));
  const r = buf.read(0, 10);
  assert.deepEqual(seqs(r), [1]);
  assert.equal(r.chunks[0].data.length, 50);
  assert.equal(r.nextSeq, 2);
  assert.deepEqual(seqs(buf.read(0, 0)), [1]);
});

Deno.test("OutputBuffer: oldest chunks are evicted past the cap; evicted names the gap", () => {
  const buf = new OutputBuffer(10);
  for (let i = 0; i < 5; i++) buf.append("stdout", bytes(4, 0x61 + i));
  // 5 x 4 bytes, cap 10: seqs 4 and 5 remain.
  assert.equal(buf.retainedBytes, 8);
  assert.equal(buf.firstSeq, 4);
  const r = buf.read(0);
  assert.deepEqual(seqs(r), [4, 5]);
  assert.deepEqual(r.chunks.map((c) => c.data[0]), [0x64, 0x65]);
  assert.deepEqual(r.evicted, { fromSeq: 1, toSeq: 3 });
  assert.deepEqual(buf.read(2).evicted, { fromSeq: 3, toSeq: 3 });
  assert.equal(buf.read(3).evicted, undefined);
  assert.equal(buf.read(4).evicted, undefined);
  // The gap is reported even when nothing after it is returned.
  const paged = buf.read(1, 0);
  assert.deepEqual(paged.evicted, { fromSeq: 2, toSeq: 3 });
  assert.deepEqual(seqs(paged), [4]);
});

Deno.test("OutputBuffer: a chunk larger than the cap is kept alone until the next one", () => {
  const buf = new OutputBuffer(10);
  buf.append("stdout", bytes(3));
  buf.append("stdout", bytes(25));
  assert.deepEqual(seqs(buf.read(0)), [2]);
  assert.equal(buf.retainedBytes, 25);
  buf.append("stdout", bytes(2));
  assert.deepEqual(seqs(buf.read(0)), [3]);
  assert.deepEqual(buf.read(0).evicted, { fromSeq: 1, toSeq: 2 });
  assert.equal(buf.retainedBytes, 2);
});

Deno.test("OutputBuffer: a chunk that exactly fills the cap evicts nothing extra", () => {
  const buf = new OutputBuffer(10);
  buf.append("stdout", bytes(5));
  buf.append("stdout", bytes(5));
  assert.deepEqual(seqs(buf.read(0)), [1, 2]);
  buf.append("stdout", bytes(1));
  assert.deepEqual(seqs(buf.read(0)), [2, 3]);
});

Deno.test("OutputBuffer: stays correct across many evictions (internal compaction)", () => {
  const buf = new OutputBuffer(100);
  for (let i = 1; i <= 5000; i++) {
    buf.append(i % 2 ? "stdout" : "stderr", new Uint8Array([i & 0xff, (i >> 8) & 0xff]));
    if (i % 997 === 0) {
      const r = buf.read(0);
      assert.equal(r.chunks.length, 50);
      assert.equal(r.chunks[0].seq, i - 49);
      assert.deepEqual(r.evicted, { fromSeq: 1, toSeq: i - 50 });
    }
  }
  assert.equal(buf.nextSeq, 5001);
  assert.equal(buf.firstSeq, 4951);
  const tail = buf.read(4990, 4);
  assert.deepEqual(seqs(tail), [4991, 4992]);
  assert.deepEqual([...tail.chunks[0].data], [4991 & 0xff, 4991 >> 8]);
  assert.equal(tail.nextSeq, 4993);
  assert.equal(tail.complete, false);
});

Deno.test("OutputBuffer: keeps a copy, so the caller may reuse its buffer", () => {
  const buf = new OutputBuffer(100);
  const reused = new Uint8Array([1, 2, 3]);
  buf.append("stdout", reused);
  reused.fill(9);
  buf.append("stdout", reused);
  assert.deepEqual(buf.read(0).chunks.map((c) => [...c.data]), [[1, 2, 3], [9, 9, 9]]);
});

Deno.test("OutputBuffer: the ring returns every byte right as it grows, wraps and evicts", () => {
  // A model that keeps every chunk whole, against the ring, with sizes that
  // force growth from 4 KiB, wrap-around at every offset, and oversize chunks.
  const cap = 10_000;
  const buf = new OutputBuffer(cap);
  const model: { seq: number; data: Uint8Array }[] = [];
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  for (let i = 1; i <= 3000; i++) {
    const size = i % 500 === 0 ? cap + rand(50) : rand(i % 3 === 0 ? 3000 : 300);
    const data = new Uint8Array(size).map((_, k) => (i * 31 + k) & 0xff);
    const { seq } = buf.append("stdout", data);
    model.push({ seq, data });
    let bytes = model.reduce((n, c) => n + c.data.length, 0);
    while (bytes > cap && model.length > 1) bytes -= model.shift()!.data.length;
    if (i % 7 === 0 || size > cap) {
      const got = buf.read(0).chunks;
      assert.deepEqual(got.map((c) => c.seq), model.map((c) => c.seq));
      got.forEach((c, k) => assert.deepEqual(c.data, model[k].data, `chunk ${c.seq}`));
    }
  }
});
