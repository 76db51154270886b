import assert from "node:assert/strict";
import { decodeBase64 } from "../protocol/base64.ts";
import { Base64Part, BinaryFrame, frameText } from "../rpc/connection.ts";
import { FrameWriter } from "./frame_writer.ts";
import { concatBytes } from "../util/bytes.ts";

/** A sink that copies what it is given, then resolves the write later. */
function recordingSink(delayMs = 0): { stream: WritableStream<Uint8Array>; text(): string } {
  const chunks: Uint8Array[] = [];
  const stream = new WritableStream<Uint8Array>({
    async write(chunk) {
      // Copy before resolving: a reused buffer may change afterwards.
      chunks.push(chunk.slice());
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    },
  });
  const text = () => new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  return { stream, text };
}

for (const reuseBuffer of [false, true]) {
  Deno.test(`FrameWriter: frames become newline-terminated lines in order (reuse=${reuseBuffer})`, async () => {
    const sink = recordingSink(1);
    const w = new FrameWriter(sink.stream, { reuseBuffer });
    const frames: string[] = [];
    for (let i = 0; i < 50; i++) {
      const frame = JSON.stringify({ i, pad: "x".repeat(i * 997) });
      frames.push(frame);
      w.send(frame);
      // Later batches are bigger than earlier ones, so the buffer grows.
      if (i % 10 === 9) await w.flushed();
    }
    await w.flushed();
    assert.equal(sink.text(), frames.join("\n") + "\n");
  });
}

Deno.test("FrameWriter: non-ASCII frames are encoded as UTF-8", async () => {
  const sink = recordingSink();
  const w = new FrameWriter(sink.stream, { reuseBuffer: true });
  w.send('{"path":"/tmp/é 漢字 🙂"}');
  w.send('{"a":1}');
  await w.flushed();
  assert.equal(sink.text(), '{"path":"/tmp/é 漢字 🙂"}\n{"a":1}\n');
});

Deno.test("FrameWriter: send() reports congestion and onDrain fires once drained", async () => {
  const sink = recordingSink(5);
  const w = new FrameWriter(sink.stream, { highWaterBytes: 1000, lowWaterBytes: 100 });
  let drained = 0;
  w.onDrain(() => drained++);
  assert.equal(w.send("x".repeat(500)), true);
  assert.equal(w.send("y".repeat(600)), false);
  await w.flushed();
  assert.equal(drained, 1);
  assert.equal(w.bufferedBytes, 0);
  assert.equal(w.send("z"), true);
  await w.close();
});

for (const reuseBuffer of [false, true]) {
  Deno.test(`FrameWriter: frames larger than a block, with characters across block edges (reuse=${reuseBuffer})`, async () => {
    const sink = recordingSink(1);
    const w = new FrameWriter(sink.stream, { reuseBuffer });
    // 3-byte and 4-byte characters at every alignment, over several 1 MiB blocks.
    const big = "a" + "漢🙂b".repeat(300_000);
    const frames = ['{"n":1}', big, '{"n":2}', "x".repeat((1 << 20) - 3), big.slice(0, 5001)];
    for (const f of frames) w.send(f);
    assert.ok(w.bufferedBytes > 2 * (1 << 20));
    await w.flushed();
    assert.equal(sink.text(), frames.join("\n") + "\n");
    assert.equal(w.bufferedBytes, 0);
  });
}

for (const reuseBuffer of [false, true]) {
  Deno.test(`FrameWriter: base64 parts, small and big, come out as their text, in order (reuse=${reuseBuffer})`, async () => {
    const sink = recordingSink(1);
    const w = new FrameWriter(sink.stream, { reuseBuffer });
    // Sizes around the eager limit and across several blocks, not multiples of 3.
    const sizes = [0, 1, 2, 5, 200_000, 3 * 1024 * 1024 + 1, 1024 * 1024, 49_153];
    const expected: string[] = [];
    for (const [i, size] of sizes.entries()) {
      const bytes = new Uint8Array(size).map((_, j) => (j * 31 + i) & 0xff);
      const parts = [`{"id":${i},"result":{"dataBase64":"`, new Base64Part(bytes), '"}}'];
      expected.push(frameText(parts));
      w.send(parts);
      // A frame sent while a big part is being written goes after it.
      if (i === 5) await new Promise((r) => setTimeout(r, 2));
      w.send(`{"after":${i}}`);
      expected.push(`{"after":${i}}`);
    }
    assert.ok(w.bufferedBytes > 4 * 1024 * 1024, "the big parts count as queued text");
    await w.flushed();
    assert.equal(w.bufferedBytes, 0);
    const lines = sink.text().split("\n");
    assert.equal(lines.pop(), "");
    assert.equal(lines.length, expected.length);
    for (const [i, line] of lines.entries()) assert.equal(line, expected[i], `line ${i}`);
    const big = JSON.parse(lines[10]).result.dataBase64;
    assert.deepEqual(
      decodeBase64(big),
      new Uint8Array(3 * 1024 * 1024 + 1).map((_, j) => (j * 31 + 5) & 0xff),
    );
  });
}

for (const reuseBuffer of [false, true]) {
  Deno.test(`FrameWriter: a binary frame is its header line and raw payload, no newline after (reuse=${reuseBuffer})`, async () => {
    const chunks: Uint8Array[] = [];
    const stream = new WritableStream<Uint8Array>({ write: (c) => void chunks.push(c.slice()) });
    const w = new FrameWriter(stream, { reuseBuffer });
    // Bigger than a 1 MiB block, with every byte value in it.
    const payload = new Uint8Array(1536 * 1024).map((_, i) => (i * 7) % 256);
    w.send('{"id":1}');
    w.send(new BinaryFrame('{"id":2,"result":{}}', "dataBase64", payload));
    w.send('{"id":3}');
    await w.flushed();
    const all = concatBytes(chunks);
    const head = `{"id":1}\n#${payload.length} dataBase64 {"id":2,"result":{}}\n`;
    assert.equal(new TextDecoder().decode(all.subarray(0, head.length)), head);
    assert.deepEqual(all.subarray(head.length, head.length + payload.length), payload);
    assert.equal(
      new TextDecoder().decode(all.subarray(head.length + payload.length)),
      '{"id":3}\n',
    );
  });
}
