import assert from "node:assert/strict";
import { linkAnswer, linkHello, parseLink, refusedFrame, refusedLine } from "./session_relay.ts";
import { resumedSessionId } from "./session_takeover.ts";
import { VERSION } from "../version.ts";

Deno.test("session link lines: hello, answers, refused frames round-trip", () => {
  assert.deepEqual(parseLink(linkHello("ab")), { version: VERSION, secret: "ab" });
  assert.deepEqual(parseLink(linkAnswer()), { ok: true });
  assert.deepEqual(parseLink(linkAnswer("no")), { error: "no" });
  assert.equal(parseLink('{"id":1,"method":"initialize"}'), undefined);
  assert.equal(parseLink("not json"), undefined);
  const tooLarge = { kind: "tooLarge", bytes: 9, limit: 8 } as const;
  assert.deepEqual(refusedFrame(refusedLine(tooLarge)), tooLarge);
  const badUtf8 = { kind: "badUtf8", bytes: 3 } as const;
  assert.deepEqual(refusedFrame(refusedLine(badUtf8)), badUtf8);
  // A client's own message is never taken for one.
  assert.equal(refusedFrame('{"id":1,"method":"x","params":{"execServerLink":1}}'), undefined);
});

Deno.test("resumedSessionId: either dialect's resume, nothing else", () => {
  const init = (params: unknown) => JSON.stringify({ id: 1, method: "initialize", params });
  assert.equal(resumedSessionId(init({ clientName: "c", resumeSessionId: "s1" })), "s1");
  assert.equal(resumedSessionId(init({ clientName: "c", session: { resume: "s2" } })), "s2");
  assert.equal(resumedSessionId(init({ clientName: "c", resumeSessionId: null })), undefined);
  assert.equal(resumedSessionId(init({ clientName: "c", session: {} })), undefined);
  assert.equal(
    resumedSessionId(init({ clientName: "resume", session: { resume: "" } })),
    undefined,
  );
  assert.equal(
    resumedSessionId('{"id":1,"method":"fs/readFile","params":{"resumeSessionId":"s"}}'),
    undefined,
  );
  assert.equal(resumedSessionId('{"resume'), undefined);
});
