import assert from "node:assert/strict";
import { type LineEvent, LineSplitter } from "./line_splitter.ts";
import { PayloadPool } from "./payload_pool.ts";
import { concatBytes } from "../util/bytes.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function pushAll(splitter: LineSplitter, ...chunks: (string | Uint8Array)[]): LineEvent[] {
  return chunks.flatMap((c) => splitter.push(typeof c === "string" ? enc(c) : c));
}

Deno.test("LineSplitter: lines split across chunks are joined", () => {
  const s = new LineSplitter(1024);
  assert.deepEqual(s.push(enc('{"a"')), []);
  assert.deepEqual(s.push(enc(":1")), []);
  assert.deepEqual(s.push(enc('}\n{"b":2}\n{"c"')), [
    { kind: "line", text: '{"a":1}' },
    { kind: "line", text: '{"b":2}' },
  ]);
  assert.deepEqual(s.push(enc(":3}\n")), [{ kind: "line", text: '{"c":3}' }]);
});

Deno.test("LineSplitter: a multi-byte character split between chunks", () => {
  const s = new LineSplitter(1024);
  const bytes = enc('"é€😀"\n');
  const events = [...bytes].flatMap((b) => s.push(new Uint8Array([b])));
  assert.deepEqual(events, [{ kind: "line", text: '"é€😀"' }]);
});

Deno.test("LineSplitter: blank and whitespace-only lines are skipped", () => {
  const s = new LineSplitter(1024);
  assert.deepEqual(pushAll(s, "\n\n  \n\t\n", "\r\n", "x\n", "\n"), [{ kind: "line", text: "x" }]);
  assert.deepEqual(s.end(), []);
});

Deno.test("LineSplitter: CRLF line endings leave a carriage return JSON ignores", () => {
  const s = new LineSplitter(1024);
  const events = pushAll(s, '{"id":1}\r\n{"id":2}\r', "\n");
  assert.equal(events.length, 2);
  assert.deepEqual(
    events.map((e) => e.kind === "line" ? JSON.parse(e.text) : e),
    [{ id: 1 }, { id: 2 }],
  );
});

Deno.test("LineSplitter: the limit counts bytes, not characters, without the newline", () => {
  const s = new LineSplitter(4);
  assert.deepEqual(s.push(enc("abcd\n")), [{ kind: "line", text: "abcd" }]);
  // "éé" is 4 bytes; "ééé" is 6.
  assert.deepEqual(s.push(enc("éé\n")), [{ kind: "line", text: "éé" }]);
  assert.deepEqual(s.push(enc("ééé\n")), [{ kind: "tooLarge", bytes: 6, limit: 4 }]);
  assert.deepEqual(s.push(enc("abcde\n")), [{ kind: "tooLarge", bytes: 5, limit: 4 }]);
});

Deno.test("LineSplitter: an oversized line is reported once, at its newline, then reading goes on", () => {
  const s = new LineSplitter(10);
  assert.deepEqual(s.push(enc("x".repeat(8))), []);
  assert.deepEqual(s.push(enc("x".repeat(8))), [], "reported before the line ended");
  assert.deepEqual(s.push(enc("x".repeat(100))), []);
  assert.deepEqual(s.push(enc('\n{"ok":1}\n')), [
    { kind: "tooLarge", bytes: 116, limit: 10 },
    { kind: "line", text: '{"ok":1}' },
  ]);
  // Nothing of the discarded line leaks into the next one.
  assert.deepEqual(s.push(enc("short\n")), [{ kind: "line", text: "short" }]);
});

Deno.test("LineSplitter: an oversized line is not buffered while it is discarded", () => {
  const s = new LineSplitter(1024);
  const chunk = new Uint8Array(1024 * 1024).fill(0x78);
  const before = Deno.memoryUsage();
  // 256 MiB of one endless line: if it were kept, the splitter would hold
  // a copy of each chunk.
  for (let i = 0; i < 256; i++) assert.deepEqual(s.push(chunk), []);
  const after = Deno.memoryUsage();
  const grown = after.external + after.heapUsed - before.external - before.heapUsed;
  assert.ok(grown < 64 * 1024 * 1024, `memory grew by ${grown} bytes`);
  assert.deepEqual(s.push(enc("\n")), [{
    kind: "tooLarge",
    bytes: 256 * 1024 * 1024,
    limit: 1024,
  }]);
});

Deno.test("LineSplitter: a line that is not UTF-8 is reported and the next one read", () => {
  const s = new LineSplitter(1024);
  const bad = new Uint8Array([0x7b, 0xc3, 0x28, 0x7d, 0x0a]);
  assert.deepEqual(s.push(bad), [{ kind: "badUtf8", bytes: 4 }]);
  assert.deepEqual(s.push(new Uint8Array([0xff, 0x0a, 0x61, 0x0a])), [
    { kind: "badUtf8", bytes: 1 },
    { kind: "line", text: "a" },
  ]);
  // A character cut off by the newline is bad too.
  assert.deepEqual(s.push(new Uint8Array([0x61, 0xe2, 0x82, 0x0a])), [
    { kind: "badUtf8", bytes: 3 },
  ]);
});

Deno.test("LineSplitter: ASCII chunks and others in one line are joined as bytes", () => {
  // The ASCII chunks take the text path, the others the byte path.
  for (const keepChunks of [false, true]) {
    const s = new LineSplitter(1024, { keepChunks });
    const parts = [enc('{"a":"x'), new Uint8Array([0xc3]), new Uint8Array([0xa9]), enc('y"}\n')];
    assert.deepEqual(parts.flatMap((p) => s.push(p)), [{ kind: "line", text: '{"a":"x\u00e9y"}' }]);
    // A bad byte after ASCII parts is still found, and a genuine U+FFFD kept.
    const bad = [enc('{"a":"'), new Uint8Array([0xff]), enc('"}\n')];
    assert.deepEqual(bad.flatMap((p) => s.push(p)), [{ kind: "badUtf8", bytes: 9 }]);
    const genuine = [enc('{"a":"'), enc("\uFFFD"), enc('"}\n')];
    assert.deepEqual(genuine.flatMap((p) => s.push(p)), [{ kind: "line", text: '{"a":"\uFFFD"}' }]);
  }
});

Deno.test("LineSplitter: a lone bad byte in an otherwise ASCII chunk is not taken for text", () => {
  // One byte each way: the decoder's U+FFFD keeps the length the same.
  const s = new LineSplitter(1024);
  assert.deepEqual(s.push(new Uint8Array([0x61, 0x80, 0x62, 0x0a, 0x63, 0x0a])), [
    { kind: "badUtf8", bytes: 3 },
    { kind: "line", text: "c" },
  ]);
});

Deno.test("LineSplitter: the final line without a newline comes from end()", () => {
  const s = new LineSplitter(1024);
  assert.deepEqual(s.push(enc('{"a":1}\n{"last":')), [{ kind: "line", text: '{"a":1}' }]);
  assert.deepEqual(s.push(enc("true}")), []);
  assert.deepEqual(s.end(), [{ kind: "line", text: '{"last":true}' }]);
  assert.deepEqual(s.end(), [], "end() reports a line once");
});

Deno.test("LineSplitter: end() reports a pending oversized line", () => {
  const s = new LineSplitter(4);
  assert.deepEqual(s.push(enc("123456")), []);
  assert.deepEqual(s.end(), [{ kind: "tooLarge", bytes: 6, limit: 4 }]);
  assert.deepEqual(new LineSplitter(4).end(), []);
});

Deno.test("LineSplitter: a held tail does not change when the caller reuses its buffer", () => {
  const s = new LineSplitter(1024);
  const buf = enc("abc");
  s.push(buf);
  buf.set(enc("XYZ"));
  assert.deepEqual(s.push(enc("\n")), [{ kind: "line", text: "abc" }]);
});

Deno.test("LineSplitter: with keepChunks, lines across chunks are joined from the chunks given", () => {
  const s = new LineSplitter(1024, { keepChunks: true });
  const parts = ['{"a":"', "x".repeat(100), '"}\n{"b"', ":2}\n"].map(enc);
  const events = parts.flatMap((p) => s.push(p));
  assert.deepEqual(events, [
    { kind: "line", text: `{"a":"${"x".repeat(100)}"}` },
    { kind: "line", text: '{"b":2}' },
  ]);
});

Deno.test("LineSplitter: a CRLF line of exactly the limit is accepted, however it is cut", () => {
  const line = '{"id":1,"pad":"' + "x".repeat(4) + '"}';
  const limit = enc(line).length;
  const whole = enc(`${line}\r\n${line}\n`);
  // Every cut into two chunks, including between the \r and the \n.
  for (let cut = 0; cut <= whole.length; cut++) {
    const s = new LineSplitter(limit);
    const events = [...s.push(whole.subarray(0, cut)), ...s.push(whole.subarray(cut))];
    assert.equal(events.length, 2, `cut at ${cut}: ${JSON.stringify(events)}`);
    for (const e of events) {
      assert.equal(e.kind, "line", `cut at ${cut}: ${JSON.stringify(e)}`);
      if (e.kind === "line") assert.deepEqual(JSON.parse(e.text), { id: 1, pad: "xxxx" });
    }
  }
  // Byte by byte too.
  const s = new LineSplitter(limit);
  const events = [...whole].flatMap((b) => s.push(new Uint8Array([b])));
  assert.deepEqual(events.map((e) => e.kind), ["line", "line"]);
});

Deno.test("LineSplitter: only a \\r right before the \\n is free", () => {
  const s = new LineSplitter(4);
  // One byte over, whether the extra byte is a \r not ending the line or
  // anything else.
  assert.deepEqual(pushAll(s, "abcd\rx\n"), [{ kind: "tooLarge", bytes: 6, limit: 4 }]);
  assert.deepEqual(pushAll(s, "abcd\r", "x\n"), [{ kind: "tooLarge", bytes: 6, limit: 4 }]);
  assert.deepEqual(pushAll(s, "abcde\n"), [{ kind: "tooLarge", bytes: 5, limit: 4 }]);
  assert.deepEqual(pushAll(s, "abcde\r\n"), [{ kind: "tooLarge", bytes: 6, limit: 4 }]);
  assert.deepEqual(pushAll(s, "abcd\r\r\n"), [{ kind: "tooLarge", bytes: 6, limit: 4 }]);
  // The limit's own line still fits, and so does a lone final \r at end().
  assert.deepEqual(pushAll(s, "abc\r\n", "abcd\r\n"), [
    { kind: "line", text: "abc\r" },
    { kind: "line", text: "abcd\r" },
  ]);
  assert.deepEqual(pushAll(s, "abcd\r"), []);
  assert.deepEqual(s.end(), [{ kind: "line", text: "abcd\r" }]);
});

const header = (n: number, json = '{"id":1,"method":"fs/writeFile","params":{}}') =>
  `#${n} dataBase64 ${json}\n`;

/** Every byte value, newlines and `#` among them. */
const PAYLOAD = new Uint8Array(700).map((_, i) => i % 256);

const join = (...parts: (string | Uint8Array)[]): Uint8Array =>
  concatBytes(parts.map((p) => typeof p === "string" ? enc(p) : p));

for (const keepChunks of [false, true]) {
  Deno.test(`LineSplitter: a binary frame's payload comes with its header (keepChunks=${keepChunks})`, () => {
    const stream = join(
      '{"a":1}\n',
      header(PAYLOAD.length),
      PAYLOAD,
      '{"b":2}\n',
      header(0),
      "x\n",
    );
    // Whole, and in every cut: one byte at a time, and in 7-byte chunks.
    for (const size of [stream.length, 1, 7]) {
      const s = new LineSplitter(1024, { keepChunks });
      const events: LineEvent[] = [];
      for (let at = 0; at < stream.length; at += size) {
        // A copy that is then overwritten: the splitter must not keep views of it
        // unless it was given the chunk.
        const chunk = stream.slice(at, at + size);
        events.push(...s.push(chunk));
        if (!keepChunks) chunk.fill(0);
      }
      assert.deepEqual(events, [
        { kind: "line", text: '{"a":1}' },
        {
          kind: "line",
          text: '{"id":1,"method":"fs/writeFile","params":{}}',
          payload: { field: "dataBase64", bytes: PAYLOAD },
        },
        { kind: "line", text: '{"b":2}' },
        {
          kind: "line",
          text: '{"id":1,"method":"fs/writeFile","params":{}}',
          payload: { field: "dataBase64", bytes: new Uint8Array(0) },
        },
        { kind: "line", text: "x" },
      ], `chunks of ${size}`);
    }
  });
}

Deno.test("LineSplitter: a payload over the limit is skipped and reported; the next line is read", () => {
  const s = new LineSplitter(100);
  const events = pushAll(s, header(300), new Uint8Array(150), new Uint8Array(150), '{"next":1}\n');
  assert.deepEqual(events, [
    { kind: "tooLarge", bytes: 300, limit: 100 },
    { kind: "line", text: '{"next":1}' },
  ]);
});

Deno.test("LineSplitter: a payload cut short by the end is dropped; a `#` line that is no header stays a line", () => {
  const s = new LineSplitter(1024);
  assert.deepEqual(pushAll(s, "#not a header\n", "#5 dataBase64 {}\r\n", "abc"), [
    { kind: "line", text: "#not a header" },
  ]);
  assert.deepEqual(s.end(), []);
});

Deno.test("LineSplitter: a payload read into place, in pieces, completes its frame", () => {
  const s = new LineSplitter(1024);
  // The header and the payload's first 100 bytes arrive as one chunk.
  assert.deepEqual(s.push(join(header(PAYLOAD.length), PAYLOAD.subarray(0, 100))), []);
  let at = 100;
  const events: LineEvent[] = [];
  while (at < PAYLOAD.length) {
    const room = s.payloadRoom()!;
    assert.equal(room.byteLength, PAYLOAD.length - at);
    const n = Math.min(250, room.byteLength);
    room.set(PAYLOAD.subarray(at, at + n));
    events.push(...s.payloadFilled(n));
    at += n;
  }
  assert.deepEqual(events, [{
    kind: "line",
    text: '{"id":1,"method":"fs/writeFile","params":{}}',
    payload: { field: "dataBase64", bytes: PAYLOAD },
  }]);
  assert.equal(s.payloadRoom(), undefined);
  assert.deepEqual(pushAll(s, '{"next":1}\n'), [{ kind: "line", text: '{"next":1}' }]);
});

Deno.test("LineSplitter: no room outside a payload, nor for one skipped for its size", () => {
  const s = new LineSplitter(100);
  assert.equal(s.payloadRoom(), undefined);
  assert.throws(() => s.payloadFilled(1), RangeError);
  assert.deepEqual(pushAll(s, header(300)), []);
  assert.equal(s.payloadRoom(), undefined);
  const t = new LineSplitter(1024);
  pushAll(t, header(10));
  assert.throws(() => t.payloadFilled(11), /11 bytes do not fit/);
});

Deno.test("LineSplitter: payload buffers come from its pool, and one given back carries the next", () => {
  const pool = new PayloadPool(1024, 2);
  const s = new LineSplitter(4096, { pool });
  const [first] = pushAll(s, header(700), PAYLOAD);
  assert.ok(first.kind === "line" && first.payload);
  const firstBuffer = first.payload.bytes.buffer;
  assert.ok(pool.give(first.payload.bytes));
  const [second] = pushAll(s, header(3), "abc");
  assert.ok(second.kind === "line" && second.payload);
  assert.equal(second.payload.bytes.buffer, firstBuffer);
  assert.deepEqual(second.payload.bytes, enc("abc"));
  // Bigger than a slot: a buffer of its own, which the pool does not take.
  const [big] = pushAll(s, header(2000), new Uint8Array(2000));
  assert.ok(big.kind === "line" && big.payload);
  assert.equal(pool.give(big.payload.bytes), false);
});
