import assert from "node:assert/strict";
import { applyEdits, readEdits } from "./text_edits.ts";

Deno.test("applyEdits: edits apply in order, each seeing the last", () => {
  const out = applyEdits("one\ntwo\nthree\n", [
    { oldText: "two", newText: "2" },
    { oldText: "2\nthree", newText: "2\n3" },
  ], "/f");
  assert.equal(out, "one\n2\n3\n");
});

Deno.test("applyEdits: a missing or repeated oldText is refused, naming the edit and the file", () => {
  assert.throws(
    () => applyEdits("a\n", [{ oldText: "b", newText: "c" }], "/f.txt"),
    /oldText not found in \/f\.txt/,
  );
  assert.throws(
    () =>
      applyEdits("x x x", [{ oldText: "a", newText: "" }, { oldText: "x", newText: "y" }], "/f"),
    /edit 1: oldText not found/,
  );
  assert.throws(
    () => applyEdits("x x x", [{ oldText: "x", newText: "y" }], "/f"),
    /occurs 3 times in \/f/,
  );
});

Deno.test("applyEdits: LF text matches a CRLF file, which keeps its CRLFs", () => {
  const out = applyEdits("a\r\nb\r\nc\r\n", [{ oldText: "a\nb", newText: "A\nB" }], "/f");
  assert.equal(out, "A\r\nB\r\nc\r\n");
});

Deno.test("readEdits: the edits argument is checked", () => {
  assert.throws(() => readEdits({}), /edits must be a non-empty array/);
  assert.throws(() => readEdits({ edits: [{ oldText: "", newText: "x" }] }), /edits\[0\]\.oldText/);
  assert.throws(() => readEdits({ edits: [{ oldText: "a" }] }), /edits\[0\]\.newText/);
  assert.deepEqual(readEdits({ edits: [{ oldText: "a", newText: "b", extra: 1 }] }), [
    { oldText: "a", newText: "b" },
  ]);
});
