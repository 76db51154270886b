import assert from "node:assert/strict";
import { decodeBase64, decodeBase64ByBuffer, encodeBase64, InvalidBase64Error } from "./base64.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

Deno.test("encodeBase64: standard alphabet with padding", () => {
  assert.equal(encodeBase64(new Uint8Array()), "");
  assert.equal(encodeBase64(enc("h")), "aA==");
  assert.equal(encodeBase64(enc("hi")), "aGk=");
  assert.equal(encodeBase64(enc("hi!")), "aGkh");
  assert.equal(encodeBase64(new Uint8Array([0xfb, 0xff])), "+/8=");
});

Deno.test("encodeBase64: encodes only the view's bytes", () => {
  const backing = new Uint8Array([1, 2, 3, 4, 5, 6]);
  assert.equal(encodeBase64(backing.subarray(1, 3)), encodeBase64(new Uint8Array([2, 3])));
});

Deno.test("decodeBase64: round trip of every byte value and every length mod 3", () => {
  const all = new Uint8Array(256).map((_, i) => i);
  for (let n = 0; n <= 5; n++) {
    const bytes = all.subarray(250 - n, 256);
    assert.deepEqual(decodeBase64(encodeBase64(bytes)), bytes);
  }
  assert.deepEqual(decodeBase64(encodeBase64(all)), all);
  assert.deepEqual(decodeBase64(""), new Uint8Array());
});

Deno.test("decodeBase64: rejects anything that is not canonical padded base64", () => {
  const bad = [
    "aGk", // padding missing
    "aA", // padding missing
    "aA=", // short padding
    "a===", // too much padding
    "aG=k", // padding inside
    "aGk=aGk=", // padding before the end
    "a b=", // space
    "aGk=\n", // newline
    " aGk=", // leading space
    // Whitespace in text whose length is a multiple of 4: the native
    // decoder would skip it; the decoded length gives it away.
    "aGk=    ", // trailing spaces
    "aGVs\nbG8=    ", // newline and spaces
    "\t\t\t\taGk=", // leading tabs
    "aG\r\nk=\r\n  ", // CRLFs
    "aGVsbG8g d29ybGQh   ", // a space inside, padding out of place
    "-_8=", // URL-safe alphabet
    "aGé=", // not ASCII
    "aGl=", // non-zero bits after the last byte
    "aB==", // non-zero bits after the last byte
    "====",
  ];
  for (const text of bad) {
    assert.throws(() => decodeBase64(text), InvalidBase64Error, JSON.stringify(text));
    assert.throws(() => decodeBase64ByBuffer(text), InvalidBase64Error, JSON.stringify(text));
  }
});

Deno.test("decodeBase64ByBuffer (Node's path): the same bytes as the native decoder", () => {
  const all = new Uint8Array(256).map((_, i) => i);
  for (let n = 0; n <= 5; n++) {
    const bytes = all.subarray(250 - n, 256);
    assert.deepEqual(decodeBase64ByBuffer(encodeBase64(bytes)), bytes);
  }
  const big = new Uint8Array(3 * 1024 * 1024 + 1).map((_, i) => (i * 7919) & 0xff);
  assert.deepEqual(decodeBase64ByBuffer(encodeBase64(big)), decodeBase64(encodeBase64(big)));
  assert.deepEqual(decodeBase64ByBuffer(""), new Uint8Array());
});

Deno.test("InvalidBase64Error names the length and a short prefix of the input", () => {
  const long = "!".repeat(100);
  const err = (() => {
    try {
      decodeBase64(long);
    } catch (e) {
      return e as Error;
    }
    throw new Error("accepted");
  })();
  assert.equal(err.name, "InvalidBase64Error");
  assert.match(err.message, /^invalid base64 \(100 characters\): "!{24}\.\.\."$/);
  assert.throws(() => decodeBase64("ab"), /invalid base64 \(2 characters\): "ab"/);
});
