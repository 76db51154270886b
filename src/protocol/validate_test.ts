import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "./errors.ts";
import {
  absolutePath,
  optionalBoolean,
  optionalNonNegativeInteger,
  paramsObject,
  requireAbsolutePath,
  requireBoolean,
  requireIntegerInRange,
  requireNonEmptyString,
  requireString,
  requireStringArray,
  requireStringRecord,
} from "./validate.ts";

/** Assert that `fn` throws an InvalidParams RpcError whose message matches. */
function invalid(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, ErrorCode.InvalidParams);
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("paramsObject: absent params read as {}, non-objects are rejected", () => {
  assert.deepEqual(paramsObject(undefined, "m"), {});
  assert.deepEqual(paramsObject(null, "m"), {});
  assert.deepEqual(paramsObject({ a: 1 }, "m"), { a: 1 });
  invalid(
    () => paramsObject([1], "process/start"),
    /process\/start: params must be an object, got \[1\]/,
  );
  invalid(() => paramsObject("x", "m"), /got "x"/);
});

Deno.test("requireString and requireNonEmptyString name the field and value", () => {
  assert.equal(requireString({ f: "" }, "f"), "");
  invalid(() => requireString({}, "f"), /^f must be a string, got nothing$/);
  invalid(() => requireString({ f: 3 }, "f"), /got 3/);
  invalid(() => requireString({ f: null }, "f"), /got null/);
  assert.equal(requireNonEmptyString({ f: "x" }, "f"), "x");
  invalid(() => requireNonEmptyString({ f: "" }, "f"), /f must not be empty/);
});

Deno.test("long values are shortened in messages", () => {
  invalid(() => requireString({ f: ["y".repeat(200)] }, "f"), /got \["y{70,80}\.\.\.$/);
});

Deno.test("requireBoolean and optionalBoolean", () => {
  assert.equal(requireBoolean({ b: false }, "b"), false);
  invalid(() => requireBoolean({ b: "true" }, "b"), /b must be a boolean, got "true"/);
  invalid(() => requireBoolean({}, "b"), /got nothing/);
  assert.equal(optionalBoolean({}, "b", true), true);
  assert.equal(optionalBoolean({ b: null }, "b", true), true);
  assert.equal(optionalBoolean({ b: false }, "b", true), false);
  invalid(() => optionalBoolean({ b: 0 }, "b", true), /b must be a boolean, got 0/);
});

Deno.test("optionalNonNegativeInteger", () => {
  assert.equal(optionalNonNegativeInteger({}, "n"), undefined);
  assert.equal(optionalNonNegativeInteger({ n: null }, "n"), undefined);
  assert.equal(optionalNonNegativeInteger({ n: 0 }, "n"), 0);
  assert.equal(optionalNonNegativeInteger({ n: 10 }, "n", 10), 10);
  invalid(
    () => optionalNonNegativeInteger({ n: 11 }, "n", 10),
    /n must be an integer from 0 to 10, got 11/,
  );
  invalid(() => optionalNonNegativeInteger({ n: -1 }, "n"), /got -1/);
  invalid(() => optionalNonNegativeInteger({ n: 1.5 }, "n"), /got 1.5/);
  invalid(() => optionalNonNegativeInteger({ n: "1" }, "n"), /got "1"/);
  invalid(() => optionalNonNegativeInteger({ n: 2 ** 60 }, "n"), /got/);
});

Deno.test("requireIntegerInRange", () => {
  assert.equal(requireIntegerInRange({ r: 1 }, "r", 1, 5), 1);
  assert.equal(requireIntegerInRange({ r: 5 }, "r", 1, 5), 5);
  invalid(
    () => requireIntegerInRange({ r: 0 }, "r", 1, 5),
    /r must be an integer from 1 to 5, got 0/,
  );
  invalid(() => requireIntegerInRange({}, "r", 1, 5), /got nothing/);
});

Deno.test("requireStringArray: non-empty, strings only, index named", () => {
  assert.deepEqual(requireStringArray({ a: ["x", ""] }, "a"), ["x", ""]);
  invalid(() => requireStringArray({ a: [] }, "a"), /a must not be empty/);
  invalid(() => requireStringArray({ a: "x" }, "a"), /a must be an array of strings, got "x"/);
  invalid(() => requireStringArray({ a: ["x", null] }, "a"), /a\[1\] must be a string, got null/);
});

Deno.test("requireStringRecord: string values, no '=' or NUL", () => {
  assert.deepEqual(requireStringRecord({ e: {} }, "e"), {});
  assert.deepEqual(requireStringRecord({ e: { A: "1=2" } }, "e"), { A: "1=2" });
  invalid(() => requireStringRecord({ e: [] }, "e"), /e must be an object of strings, got \[\]/);
  invalid(() => requireStringRecord({ e: null }, "e"), /got null/);
  invalid(() => requireStringRecord({ e: { A: 1 } }, "e"), /e\.A must be a string, got 1/);
  invalid(() => requireStringRecord({ e: { "A=B": "x" } }, "e"), /invalid entry "A=B"/);
  invalid(() => requireStringRecord({ e: { A: "x\0y" } }, "e"), /invalid entry "A"/);
});

Deno.test("absolutePath: absolute paths pass unchanged, relative ones are rejected", () => {
  assert.equal(absolutePath("/", "cwd"), "/");
  assert.equal(absolutePath("/tmp/a b/../c", "cwd"), "/tmp/a b/../c");
  for (const rel of ["tmp", "./tmp", "../tmp", "", "~/x", "C:\\x"]) {
    invalid(() => absolutePath(rel, "cwd"), /^cwd must be an absolute path, got /);
  }
  invalid(() => absolutePath("/a\0b", "path"), /path must not contain NUL/);
});

Deno.test("absolutePath: file:// URIs are decoded to paths", () => {
  assert.equal(absolutePath("file:///tmp/a%20b", "path"), "/tmp/a b");
  assert.equal(absolutePath("file://localhost/etc/hosts", "path"), "/etc/hosts");
  assert.equal(absolutePath("file:/etc", "path"), "/etc");
  assert.equal(absolutePath("FILE:///etc", "path"), "/etc");
  assert.equal(absolutePath("file:///tmp/%3Fq%23h", "path"), "/tmp/?q#h");
  assert.equal(absolutePath("file:///tmp/%C3%A9", "path"), "/tmp/é");
});

Deno.test("absolutePath: bad file URIs are rejected, naming the value", () => {
  invalid(
    () => absolutePath("file://example.com/etc", "path"),
    /names a remote host: "file:\/\/example.com\/etc"/,
  );
  invalid(
    () => absolutePath("file:relative", "path"),
    /must be an absolute file URI, got "file:relative"/,
  );
  invalid(() => absolutePath("file:///a%ZZ", "path"), /not a valid file URI/);
  invalid(() => absolutePath("file:///a%00b", "path"), /must not contain NUL/);
  invalid(() => absolutePath("file:///tmp/a?b", "path"), /query or fragment/);
  invalid(() => absolutePath("file:///tmp/a#b", "path"), /query or fragment/);
  invalid(() => absolutePath("file:///tmp/a?", "path"), /query or fragment/);
});

Deno.test("requireAbsolutePath reads and checks a field", () => {
  assert.equal(requireAbsolutePath({ path: "file:///x" }, "path"), "/x");
  invalid(() => requireAbsolutePath({ path: 5 }, "path"), /path must be a string, got 5/);
  invalid(() => requireAbsolutePath({ path: "x" }, "path"), /path must be an absolute path/);
});

Deno.test("absolutePath: a file URI with an encoded slash is refused", () => {
  assert.throws(() => absolutePath("file:///etc%2Fpasswd", "path"), /encodes a '\/' \(%2F\)/);
  assert.throws(() => absolutePath("file:///etc%2fpasswd", "path"), /%2F/);
  assert.equal(absolutePath("file:///a%20b", "path"), "/a b");
});
