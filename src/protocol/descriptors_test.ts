import assert from "node:assert/strict";
import {
  isProcessExitedParams,
  isProcessOutputParams,
  Notifications,
  Requests,
} from "./descriptors.ts";
import { Method } from "./methods.ts";

Deno.test("descriptors name every method of the protocol exactly once", () => {
  const names = [
    ...Object.values(Requests).map((r) => r.method),
    ...Object.values(Notifications).map((n) => n.method),
  ];
  assert.deepEqual([...names].sort(), [...Object.values(Method)].sort());
  assert.ok(Object.values(Requests).every((r) => r.kind === "request"));
  assert.ok(Object.values(Notifications).every((n) => n.kind === "notification"));
  assert.ok(Object.isFrozen(Requests.processStart));
});

Deno.test("notification guards accept the wire shapes and refuse the rest", () => {
  assert.ok(isProcessOutputParams({ processId: "p", stream: "pty", chunk: "aGk=", seq: 3 }));
  assert.ok(isProcessOutputParams({ processId: "p", stream: "stdout", chunk: "" }));
  assert.ok(!isProcessOutputParams({ processId: "p", stream: "tty", chunk: "" }));
  assert.ok(!isProcessOutputParams({ processId: "p", stream: "stdout", chunk: "", seq: "1" }));
  assert.ok(!isProcessOutputParams(null));
  assert.ok(isProcessExitedParams({ processId: "p", exitCode: 0, signal: null, durationMs: 1 }));
  assert.ok(isProcessExitedParams({ processId: "p", exitCode: 137, signal: "SIGKILL" }));
  assert.ok(!isProcessExitedParams({ processId: "p" }));
  assert.ok(!isProcessExitedParams({ processId: "p", exitCode: 0, signal: 9 }));
});
