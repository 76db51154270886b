import assert from "node:assert/strict";
import { frameText } from "./connection.ts";
import { stringifyMessage, VerbatimString } from "./verbatim.ts";

Deno.test("stringifyMessage: verbatim fields are spliced in; the rest is JSON.stringify's", () => {
  const message = {
    id: "a\u0000b",
    result: {
      path: '/tmp/"q"\u0000verbatim:1 "dataBase64":"x"',
      dataBase64: new VerbatimString("aGVsbG8="),
      nested: { x: [1, 2] },
      other: new VerbatimString(""),
    },
  };
  const frame = stringifyMessage(message);
  assert.ok(Array.isArray(frame) && frame.includes("aGVsbG8="), "the base64 is a part of its own");
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

Deno.test("stringifyMessage: messages without verbatim fields are JSON.stringify's", () => {
  for (
    const m of [{ id: 1, result: [1, 2] }, { id: 2, result: null }, { id: 3, result: { a: 1 } }, {
      id: 4,
    }]
  ) {
    assert.equal(stringifyMessage(m), JSON.stringify(m));
  }
});
