import assert from "node:assert/strict";
import { classifyMessage } from "./messages.ts";

Deno.test("classifyMessage: requests, with string and integer ids", () => {
  assert.deepEqual(classifyMessage({ id: 1, method: "m", params: { a: 1 } }), {
    kind: "request",
    message: { id: 1, method: "m", params: { a: 1 } },
  });
  assert.deepEqual(classifyMessage({ id: "x-1", method: "m" }), {
    kind: "request",
    message: { id: "x-1", method: "m", params: undefined },
  });
  assert.equal(classifyMessage({ id: 0, method: "m" }).kind, "request");
  assert.equal(classifyMessage({ id: "", method: "m" }).kind, "request");
});

Deno.test("classifyMessage: the jsonrpc member is accepted and ignored", () => {
  assert.deepEqual(classifyMessage({ jsonrpc: "2.0", id: 2, method: "m" }), {
    kind: "request",
    message: { id: 2, method: "m", params: undefined },
  });
  assert.equal(classifyMessage({ jsonrpc: "1.0", method: "n" }).kind, "notification");
});

Deno.test("classifyMessage: notifications have no id", () => {
  assert.deepEqual(classifyMessage({ method: "initialized" }), {
    kind: "notification",
    message: { method: "initialized", params: undefined },
  });
  assert.deepEqual(classifyMessage({ method: "n", params: [1], id: undefined }), {
    kind: "notification",
    message: { method: "n", params: [1] },
  });
});

Deno.test("classifyMessage: results and errors", () => {
  assert.deepEqual(classifyMessage({ id: 3, result: null }), {
    kind: "response",
    message: { id: 3, result: null },
  });
  assert.deepEqual(
    classifyMessage({
      id: "e",
      error: { code: -32600, message: "bad", data: { errno: "ENOENT" } },
    }),
    {
      kind: "error",
      message: { id: "e", error: { code: -32600, message: "bad", data: { errno: "ENOENT" } } },
    },
  );
  // An error without a readable id still is an error (id null).
  assert.deepEqual(classifyMessage({ id: null, error: { code: -32700, message: "p" } }), {
    kind: "error",
    message: { id: null, error: { code: -32700, message: "p" } },
  });
  // Missing code or message are filled in rather than trusted.
  assert.deepEqual(classifyMessage({ id: 1, error: {} }), {
    kind: "error",
    message: { id: 1, error: { code: 0, message: "" } },
  });
});

Deno.test("classifyMessage: values that are not objects are invalid with id null", () => {
  for (const value of [[1], 42, "text", null, true]) {
    const c = classifyMessage(value);
    assert.equal(c.kind, "invalid");
    if (c.kind === "invalid") {
      assert.equal(c.id, null);
      assert.match(c.reason, /expected a JSON object/);
    }
  }
  const arr = classifyMessage([]);
  assert.ok(arr.kind === "invalid" && /an array/.test(arr.reason));
});

Deno.test("classifyMessage: a bad id or method is invalid, echoing the id when readable", () => {
  const badId = classifyMessage({ id: { a: 1 }, method: "m" });
  assert.ok(badId.kind === "invalid");
  assert.equal(badId.id, null);
  assert.match(badId.reason, /request id must be an integer or a string, got \{"a":1\}/);
  const nullId = classifyMessage({ id: null, method: "m" });
  assert.ok(nullId.kind === "invalid" && nullId.id === null);
  const badMethod = classifyMessage({ id: 9, method: 5 });
  assert.ok(badMethod.kind === "invalid");
  assert.equal(badMethod.id, 9);
  assert.match(badMethod.reason, /method must be a string, got 5/);
});

Deno.test("classifyMessage: neither method nor result nor error is invalid", () => {
  const c = classifyMessage({ id: 4, params: {} });
  assert.ok(c.kind === "invalid");
  assert.equal(c.id, 4);
  assert.match(c.reason, /neither a method nor a result or error/);
  assert.equal(classifyMessage({}).kind, "invalid");
  // A result without an id answers nothing.
  assert.equal(classifyMessage({ result: 1 }).kind, "invalid");
  // A non-object error member is not an error response.
  assert.equal(classifyMessage({ id: 1, error: "bad" }).kind, "invalid");
});
