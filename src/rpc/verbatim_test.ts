import assert from "node:assert/strict";
import { Base64Part, BinaryFrame, frameText } from "./connection.ts";
import { stringifyMessage } from "./verbatim.ts";

Deno.test("stringifyMessage: base64 fields are spliced in; the rest is JSON.stringify's", () => {
  const hello = new Base64Part(new TextEncoder().encode("hello"));
  const message = {
    id: "a\u0000b",
    result: {
      path: '/tmp/"q"\u0000verbatim:1 "dataBase64":"x"',
      dataBase64: hello,
      nested: { x: [1, 2] },
      other: new Base64Part(new Uint8Array()),
    },
  };
  const frame = stringifyMessage(message);
  assert.ok(Array.isArray(frame) && frame.includes(hello), "the base64 is a part of its own");
  const text = frameText(frame);
  assert.deepEqual(JSON.parse(text), {
    id: "a\u0000b",
    result: {
      path: '/tmp/"q"\u0000verbatim:1 "dataBase64":"x"',
      dataBase64: "aGVsbG8=",
      nested: { x: [1, 2] },
      other: "",
    },
  });
  assert.equal(text, JSON.stringify(message), "the same text as JSON.stringify (via toJSON)");
});

Deno.test("stringifyMessage: messages without base64 fields are JSON.stringify's", () => {
  for (
    const m of [{ id: 1, result: [1, 2] }, { id: 2, result: null }, { id: 3, result: { a: 1 } }, {
      id: 4,
    }]
  ) {
    assert.equal(stringifyMessage(m), JSON.stringify(m));
  }
});

Deno.test("stringifyMessage: Base64Part fields stay parts for the transport to encode", () => {
  const bytes = new TextEncoder().encode("hello");
  const part = new Base64Part(bytes);
  const message = { id: 7, result: { dataBase64: part, size: 5, eof: true } };
  const frame = stringifyMessage(message);
  assert.ok(Array.isArray(frame) && frame.includes(part), "the part itself, not its text");
  assert.equal(part.textLength, "aGVsbG8=".length);
  assert.equal(String(part), "aGVsbG8=");
  // Joined, and serialized elsewhere, it is its text.
  assert.equal(frameText(frame), JSON.stringify(message));
  assert.deepEqual(JSON.parse(frameText(frame)), {
    id: 7,
    result: { dataBase64: "aGVsbG8=", size: 5, eof: true },
  });
});

Deno.test("stringifyMessage: with binaryFrames, only a Base64Part marked binaryFrame makes a frame", () => {
  const bytes = new Uint8Array([1, 2, 3]);
  const marked = new Base64Part(bytes, { binaryFrame: true });
  const binary = { binaryFrames: true };
  const frame = stringifyMessage(
    { id: 1, result: { dataBase64: marked, size: 3, eof: true } },
    binary,
  );
  assert.ok(frame instanceof BinaryFrame);
  assert.equal(frame.header(), '#3 dataBase64 {"id":1,"result":{"size":3,"eof":true}}\n');
  assert.deepEqual(frame.bytes, bytes);
  const request = stringifyMessage({
    id: 2,
    method: "fs/writeFile",
    params: { path: "/x", dataBase64: marked, append: true },
  }, binary);
  assert.ok(request instanceof BinaryFrame);
  assert.equal(
    request.header(),
    '#3 dataBase64 {"id":2,"method":"fs/writeFile","params":{"path":"/x","append":true}}\n',
  );
  // No frame: an unmarked part, a string, no object, or a transport without frames.
  const plain = new Base64Part(bytes);
  for (
    const [message, opts, text] of [
      [{ id: 3, result: { dataBase64: plain } }, binary, '{"id":3,"result":{"dataBase64":"AQID"}}'],
      [
        { id: 4, result: { dataBase64: "AQID" } },
        binary,
        '{"id":4,"result":{"dataBase64":"AQID"}}',
      ],
      [{ id: 5, result: [marked] }, binary, '{"id":5,"result":["AQID"]}'],
      [{ id: 6, result: { dataBase64: marked } }, {}, '{"id":6,"result":{"dataBase64":"AQID"}}'],
    ] as const
  ) {
    const out = stringifyMessage(message, opts);
    assert.ok(!(out instanceof BinaryFrame), text);
    assert.equal(frameText(out), text);
  }
});
