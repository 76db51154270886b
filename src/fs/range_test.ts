import assert from "node:assert/strict";
import {
  checkPlacement,
  checkRange,
  integerProblem,
  lengthProblem,
  MAX_FILE_OFFSET,
  placementProblem,
} from "./range.ts";
import { FileSystemError } from "./types.ts";

Deno.test("integerProblem accepts absent values and integers in range only", () => {
  assert.equal(integerProblem("offset", undefined, 10), undefined);
  assert.equal(integerProblem("offset", null, 10), undefined);
  assert.equal(integerProblem("offset", 0, 10), undefined);
  assert.equal(integerProblem("offset", 10, 10), undefined);
  assert.equal(integerProblem("offset", -1, 10), "offset must be an integer from 0 to 10, got -1");
  assert.equal(
    integerProblem("length", 1.5, 10),
    "length must be an integer from 0 to 10, got 1.5",
  );
  assert.equal(integerProblem("length", 11, 10), "length must be an integer from 0 to 10, got 11");
  assert.equal(
    integerProblem("length", "3", 10),
    'length must be an integer from 0 to 10, got "3"',
  );
  assert.match(integerProblem("offset", 2 ** 60, MAX_FILE_OFFSET)!, /offset must be an integer/);
});

Deno.test("lengthProblem refuses only lengths over the read limit", () => {
  assert.equal(lengthProblem(undefined, 5), undefined);
  assert.equal(lengthProblem(5, 5), undefined);
  assert.equal(lengthProblem(6, 5), "length 6 is over the read limit of 5 bytes");
});

Deno.test("checkRange returns the bounds or an EINVAL FileSystemError naming the field", () => {
  assert.deepEqual(checkRange("readFile", "/f", {}, 100), { offset: 0, length: undefined });
  assert.deepEqual(checkRange("readFile", "/f", { offset: 7, length: 3 }, 100), {
    offset: 7,
    length: 3,
  });
  for (
    const [options, field] of [
      [{ offset: -1 }, "offset"],
      [{ length: -2 }, "length"],
      [{ length: 101 }, "length 101"],
    ] as const
  ) {
    assert.throws(() => checkRange("readFile", "/f", options, 100), (err: unknown) => {
      assert.ok(err instanceof FileSystemError);
      assert.equal(err.kind, "invalidInput");
      assert.equal(err.errno, "EINVAL");
      assert.equal(err.path, "/f");
      assert.ok(err.message.startsWith(`readFile /f: ${field}`), err.message);
      return true;
    });
  }
});

Deno.test("placement: replace by default, append, or at an offset; never both", () => {
  assert.deepEqual(checkPlacement("writeFile", "/f", {}), { kind: "replace" });
  assert.deepEqual(checkPlacement("writeFile", "/f", { append: false }), { kind: "replace" });
  assert.deepEqual(checkPlacement("writeFile", "/f", { append: true }), { kind: "append" });
  assert.deepEqual(checkPlacement("writeFile", "/f", { offset: 0 }), { kind: "at", offset: 0 });
  assert.equal(placementProblem(true, 4), "append and offset exclude each other");
  assert.equal(placementProblem("yes", undefined), 'append must be a boolean, got "yes"');
  assert.match(placementProblem(undefined, -4)!, /offset must be an integer/);
  assert.throws(
    () => checkPlacement("writeFile", "/f", { append: true, offset: 1 }),
    /writeFile \/f: append and offset exclude each other/,
  );
});
