import assert from "node:assert/strict";
import { toExitedEvent, toOutputEvent } from "./notifications.ts";

Deno.test("toOutputEvent decodes the chunk and keeps the seq", () => {
  assert.deepEqual(toOutputEvent({ processId: "p", stream: "stderr", chunk: "aGk=", seq: 2 }), {
    processId: "p",
    stream: "stderr",
    data: new Uint8Array([104, 105]),
    seq: 2,
  });
  assert.equal(toOutputEvent({ processId: "p", stream: "stdout", chunk: "!!" }), undefined);
  assert.equal(toOutputEvent({ processId: "p", stream: "stdout" }), undefined);
});

Deno.test("toExitedEvent fills what a plain v0 server leaves out", () => {
  assert.deepEqual(toExitedEvent({ processId: "p", exitCode: 3 }), {
    processId: "p",
    exitCode: 3,
    signal: null,
    durationMs: undefined,
    startedAtMs: undefined,
    exitedAtMs: undefined,
  });
  const full = toExitedEvent({
    processId: "p",
    exitCode: 130,
    signal: "SIGINT",
    durationMs: 5,
    startedAtMs: 1,
    exitedAtMs: 6,
  });
  assert.equal(full?.signal, "SIGINT");
  assert.equal(full?.exitedAtMs, 6);
  assert.equal(toExitedEvent({ processId: "p" }), undefined);
});
