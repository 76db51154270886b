import assert from "node:assert/strict";
import type { FdInput, ReadSink } from "../runtime/fd_reader.ts";
import type { IncomingFrame } from "../rpc/connection.ts";
import { concatBytes } from "../util/bytes.ts";
import { StdioConnection } from "./stdio.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/**
 * A descriptor stand-in: serves `data` in reads of at most `readBytes`
 * into whatever target the sink names, stops when the sink says so, and
 * records what it did.
 */
function scriptedInput(data: Uint8Array, readBytes: number) {
  const log = { reads: 0, inPlace: 0, pauses: 0, fed: 0 };
  let paused = false;
  let at = 0;
  let sink: ReadSink;
  const pump = (): void => {
    while (!paused && at < data.length) {
      const target = sink.target();
      const n = Math.min(readBytes, target.byteLength, data.length - at);
      target.set(data.subarray(at, at + n));
      at += n;
      log.reads += 1;
      log.fed = at;
      if (target.byteLength !== 64 * 1024) log.inPlace += 1;
      if (!sink.filled(n)) {
        paused = true;
        log.pauses += 1;
      }
    }
    if (at === data.length) sink.end();
  };
  const input: FdInput = (s) => {
    sink = s;
    setTimeout(pump, 0);
    return {
      resume: () => {
        if (!paused) return;
        paused = false;
        setTimeout(pump, 0);
      },
      close: () => {},
    };
  };
  return { input, log };
}

const nullWritable = (): WritableStream<Uint8Array> => new WritableStream();

Deno.test("StdioConnection: a descriptor input reads payloads into place and lines around them", async () => {
  const payload = new Uint8Array(300_000).map((_, i) => (i * 7) % 256);
  const data = concatBytes([
    enc('{"a":1}\n'),
    enc(`#${payload.length} dataBase64 {"id":1,"method":"fs/writeFile","params":{}}\n`),
    payload,
    enc('{"b":2}\n{"c":'),
    enc("3}"),
  ]);
  for (const readBytes of [1000, 64 * 1024, 1 << 20]) {
    const { input, log } = scriptedInput(data, readBytes);
    const conn = new StdioConnection(input, nullWritable());
    const frames: IncomingFrame[] = [];
    for await (const f of conn.frames()) frames.push(f);
    assert.deepEqual(frames, [
      { kind: "text", text: '{"a":1}' },
      {
        kind: "text",
        text: '{"id":1,"method":"fs/writeFile","params":{}}',
        payload: { field: "dataBase64", bytes: payload },
      },
      { kind: "text", text: '{"b":2}' },
      { kind: "text", text: '{"c":3}' },
    ], `reads of ${readBytes}`);
    // Only the read that brought the header put payload bytes in the line buffer.
    assert.ok(log.inPlace >= Math.ceil((payload.length - readBytes) / readBytes), `${log.inPlace}`);
  }
});

Deno.test("StdioConnection: a descriptor input pauses while the consumer lags, and loses nothing", async () => {
  const lines = Array.from({ length: 200 }, (_, i) => `{"n":${i}}\n`).join("");
  const { input, log } = scriptedInput(enc(lines), 16);
  const conn = new StdioConnection(input, nullWritable());
  const seen: string[] = [];
  for await (const f of conn.frames()) {
    if (seen.length === 0) {
      // The consumer holds off after the first frame: reading must stop
      // once 16 frames are queued, not run through the whole input.
      await new Promise((r) => setTimeout(r, 50));
      assert.ok(log.fed < lines.length / 4, `fed ${log.fed} of ${lines.length} bytes`);
    }
    if (f.kind === "text") seen.push(f.text);
  }
  assert.equal(seen.length, 200);
  assert.equal(seen[199], '{"n":199}');
  assert.ok(log.pauses > 0);
});
