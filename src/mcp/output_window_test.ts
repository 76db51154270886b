import assert from "node:assert/strict";
import { OutputWindow } from "./output_window.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("OutputWindow: output within the cap comes back whole, once", () => {
  const w = new OutputWindow(8);
  w.push(enc("hello "));
  w.push(enc("world"));
  assert.deepEqual(w.read(100), { text: "hello world", omittedBytes: 0, totalBytes: 11 });
  assert.deepEqual(w.read(100), { text: "", omittedBytes: 0, totalBytes: 0 });
});

Deno.test("OutputWindow: beyond the kept bytes, the head and tail stay and the middle is counted", () => {
  const w = new OutputWindow(4);
  for (const c of "0123456789") w.push(enc(c));
  assert.equal(w.size, 10);
  const r = w.read(100);
  assert.equal(r.text, "0123\n[... 2 bytes omitted ...]\n6789");
  assert.equal(r.omittedBytes, 2);
  assert.equal(r.totalBytes, 10);
});

Deno.test("OutputWindow: a read's cap cuts again, half at each end", () => {
  const w = new OutputWindow(1024);
  w.push(enc("a".repeat(50) + "b".repeat(50)));
  const r = w.read(10);
  assert.equal(r.text, "aaaaa\n[... 90 bytes omitted ...]\nbbbbb");
  assert.equal(r.omittedBytes, 90);
});

Deno.test("OutputWindow: a cap below the kept bytes counts both omissions", () => {
  const w = new OutputWindow(6);
  w.push(enc("abcdef" + "x".repeat(10) + "uvwxyz"));
  const r = w.read(4);
  assert.equal(r.text, "ab\n[... 18 bytes omitted ...]\nyz");
  assert.equal(r.omittedBytes, 18);
  assert.equal(r.totalBytes, 22);
});

Deno.test("OutputWindow: cuts never split a UTF-8 character", () => {
  const w = new OutputWindow(1024);
  w.push(enc("é".repeat(20))); // 2 bytes each
  const r = w.read(7);
  assert.ok(!r.text.includes("\ufffd"), r.text);
  const [head, tail] = r.text.split(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/);
  assert.equal(head, "éé");
  assert.equal(tail, "é");
  assert.equal(r.omittedBytes, 40 - 4 - 2);
});

Deno.test("OutputWindow: a long stream holds at most twice the kept bytes", () => {
  const w = new OutputWindow(100);
  for (let i = 0; i < 10_000; i++) w.push(enc(`line ${i}\n`));
  const r = w.read(1_000_000);
  assert.ok(r.text.startsWith("line 0\nline 1\n"), r.text.slice(0, 20));
  assert.ok(r.text.endsWith("line 9999\n"), r.text.slice(-20));
  assert.ok(r.text.length < 300, String(r.text.length));
  const kept = r.text.replace(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/, "");
  assert.equal(r.totalBytes, r.omittedBytes + enc(kept).length);
});

Deno.test("OutputWindow: keepBytes is checked", () => {
  assert.throws(() => new OutputWindow(2), /keepBytes must be an integer of at least 4, got 2/);
});
