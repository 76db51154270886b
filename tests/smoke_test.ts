import assert from "node:assert/strict";
import { TestServer } from "./harness.ts";

Deno.test("smoke: pipe process output and exit", async () => {
  const s = await TestServer.start();
  const res = await s.start("p1", ["sh", "-c", "echo out; echo err >&2; exit 3"]);
  assert.deepEqual(res.result, { processId: "p1" });
  const exited = await s.waitExited("p1");
  assert.equal(exited.params.exitCode, 3);
  assert.equal(s.outputText("p1", "stdout"), "out\n");
  assert.equal(s.outputText("p1", "stderr"), "err\n");
  assert.equal((await s.close()).code, 0);
});
