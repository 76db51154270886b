import assert from "node:assert/strict";
import { readSessionRequest, readTtlMs } from "./sessions.ts";

Deno.test("readSessionRequest: absent, new, resume; bad shapes name the member", () => {
  assert.equal(readSessionRequest({}), undefined);
  assert.equal(readSessionRequest({ session: null }), undefined);
  assert.deepEqual(readSessionRequest({ session: {} }), {});
  assert.deepEqual(readSessionRequest({ session: { resume: "s1" } }), { resume: "s1" });
  assert.throws(() => readSessionRequest({ session: true }), /session must be an object, got true/);
  assert.throws(() => readSessionRequest({ session: [] }), /session must be an object/);
  assert.throws(() => readSessionRequest({ session: { resume: "" } }), /session\.resume/);
  assert.throws(() => readSessionRequest({ session: { resume: 7 } }), /got 7/);
});

Deno.test("readTtlMs: positive integers within the limit, only in a session", () => {
  assert.equal(readTtlMs({}, false, 10), undefined);
  assert.equal(readTtlMs({ ttlMs: 10 }, true, 10), 10);
  assert.throws(
    () => readTtlMs({ ttlMs: 11 }, true, 10),
    /ttlMs 11 exceeds .* 10 \(--max-ttl-ms\)/,
  );
  assert.throws(() => readTtlMs({ ttlMs: 0 }, true, 10), /positive integer/);
  assert.throws(() => readTtlMs({ ttlMs: 1.5 }, true, 10), /got 1\.5/);
  assert.throws(() => readTtlMs({ ttlMs: "5" }, true, 10), /got "5"/);
  assert.throws(() => readTtlMs({ ttlMs: 5 }, false, 10), /needs a resumable session/);
});
