/**
 * Server limits, end to end: processes per connection, message size and
 * retained output. A limit refuses one request; the connection and its
 * processes carry on.
 */
import assert from "node:assert/strict";
import { b64, eventually, type Msg, TestServer, unb64 } from "./harness.ts";
import { initializeResult } from "./server_helpers.ts";

Deno.test("--max-processes: the next start is refused, naming the limit", async () => {
  await using s = await TestServer.start(["--max-processes", "3", "--exited-retention-ms", "200"]);
  assert.equal(initializeResult(s).capabilities.limits.maxProcesses, 3);
  assert.equal(initializeResult(s).capabilities.limits.exitedRetentionMs, 200);
  for (const id of ["p1", "p2", "p3"]) {
    assert.deepEqual((await s.start(id, ["sleep", "30"])).result, { processId: id });
  }
  const refused = await s.start("p4", ["sleep", "30"]);
  assert.equal(refused.error?.code, -32600);
  assert.match(refused.error.message, /limit/);
  assert.match(refused.error.message, /\b3\b/);
  assert.match(refused.error.message, /--max-processes/);
  assert.match(refused.error.message, /p4/);

  // The connection keeps serving, and the refused id was never taken.
  const read = await s.call("process/read", { processId: "p1" });
  assert.equal(read.exited, false);
  const unknown = await s.request("process/read", { processId: "p4" });
  assert.equal(unknown.error?.code, -32600);

  // An exited process frees its slot at once; it stays readable until its
  // retention expires, then its id is unknown and free for reuse.
  assert.deepEqual(await s.call("process/terminate", { processId: "p1" }), { running: true });
  await s.waitExited("p1");
  assert.deepEqual((await s.start("p4", ["sleep", "30"])).result, { processId: "p4" });
  assert.equal((await s.call("process/read", { processId: "p1" })).exited, true);
  await eventually(
    async () => {
      const res = await s.request("process/read", { processId: "p1" });
      return res.error?.code === -32600 && /p1/.test(res.error.message);
    },
    10_000,
    "p1's retention to expire",
  );
  for (const id of ["p2", "p3", "p4"]) {
    await s.call("process/terminate", { processId: id });
    await s.waitExited(id);
  }
});

Deno.test("--max-processes counts running processes only; exited ones stay readable", async () => {
  await using s = await TestServer.start(["--max-processes", "1"]);
  await s.start("a", ["true"]);
  await s.waitExited("a");
  assert.deepEqual((await s.start("b", ["sleep", "30"])).result, { processId: "b" });
  const refused = await s.start("c", ["true"]);
  assert.equal(refused.error?.code, -32600);
  assert.match(refused.error.message, /limit/);
  assert.match(refused.error.message, /running/);
  // The exited process is still readable.
  const read = await s.call("process/read", { processId: "a" });
  assert.equal(read.exited, true);
  assert.equal(read.exitCode, 0);
  await s.call("process/terminate", { processId: "b" });
  await s.waitExited("b");
});

Deno.test("--max-exited-processes: the oldest exit is dropped first, then unknown", async () => {
  await using s = await TestServer.start(["--max-exited-processes", "2"]);
  assert.equal(initializeResult(s).capabilities.limits.maxExitedProcesses, 2);
  for (const id of ["a", "b", "c"]) {
    await s.start(id, ["echo", id]);
    await s.waitExited(id);
  }
  const gone = await s.request("process/read", { processId: "a" });
  assert.equal(gone.error?.code, -32600);
  assert.match(gone.error.message, /unknown process id a/);
  for (const id of ["b", "c"]) {
    const read = await s.call("process/read", { processId: id });
    assert.equal(read.exited, true);
    assert.equal(unb64(read.chunks[0].chunk), `${id}\n`);
  }
  // The dropped id is free again.
  assert.deepEqual((await s.start("a", ["true"])).result, { processId: "a" });
  await s.waitExited("a");
});

Deno.test("--max-exited-output-bytes: exits beyond the budget drop the oldest, the newest stays", async () => {
  await using s = await TestServer.start(["--max-exited-output-bytes", "3000"]);
  assert.equal(initializeResult(s).capabilities.limits.maxExitedOutputBytes, 3000);
  for (const id of ["a", "b", "c"]) {
    await s.start(id, ["head", "-c", "2000", "/dev/zero"]);
    await s.waitExited(id);
  }
  // 2000 + 2000 > 3000: only the newest fits, and the newest is always kept.
  for (const id of ["a", "b"]) {
    const res = await s.request("process/read", { processId: id });
    assert.equal(res.error?.code, -32600, `${id} should be dropped`);
  }
  const read = await s.call("process/read", { processId: "c" });
  assert.equal(read.exited, true);
  assert.equal(read.chunks.reduce((n: number, c: Msg) => n + atob(c.chunk).length, 0), 2000);
});

Deno.test("--max-message-bytes: a larger message is refused, the session lives on", async () => {
  const limit = 4096;
  await using s = await TestServer.start(["--max-message-bytes", String(limit)]);
  assert.equal(initializeResult(s).capabilities.limits.maxMessageBytes, limit);
  await s.start("cat", ["cat"], { pipeStdin: true });

  const big = JSON.stringify({
    id: 7,
    method: "process/write",
    params: { processId: "cat", chunk: b64("x".repeat(limit)) },
  });
  assert.ok(big.length > limit);
  s.writeRaw(big + "\n");
  // The line was never parsed, so the error cannot name its id.
  const err = await s.waitFor((m) => m.error !== undefined && m.id === null, 10_000, "error");
  assert.equal(err.error.code, -32600);
  assert.match(err.error.message, /too large/);
  assert.match(err.error.message, new RegExp(`${big.length} bytes`));
  assert.match(err.error.message, new RegExp(`${limit}`));
  assert.equal(s.messages.filter((m) => m.id === 7).length, 0, "the big request was not run");

  // A message just under the limit is accepted, and cat is still there.
  const fill = "y".repeat(2000);
  assert.deepEqual(
    await s.call("process/write", { processId: "cat", chunk: b64(fill) }),
    { accepted: true },
  );
  await s.call("process/write", { processId: "cat", chunk: b64("\n") });
  await s.waitFor(() => s.outputText("cat") === fill + "\n", 10_000, "cat echo");
  assert.equal(s.outputText("cat").includes("x"), false);
  await s.call("process/closeStdin", { processId: "cat" });
  assert.equal((await s.waitExited("cat")).params.exitCode, 0);
});

Deno.test("--max-output-bytes: evicted chunks show as a gap in process/read", async () => {
  const cap = 4096;
  await using s = await TestServer.start(["--max-output-bytes", String(cap)]);
  assert.equal(initializeResult(s).capabilities.limits.maxOutputBytes, cap);
  // 20 separate writes of 1000 bytes: far more than the cap, in many chunks.
  const script = 'i=0; while [ $i -lt 20 ]; do head -c 1000 /dev/zero | tr "\\0" a; ' +
    "sleep 0.02; i=$((i+1)); done";
  await s.start("big", ["sh", "-c", script]);
  await s.waitExited("big");
  const notes = s.outputsOf("big");
  const lastSeq = notes[notes.length - 1].params.seq;
  assert.ok(notes.length > 4, `only ${notes.length} chunks`);
  assert.equal(s.outputText("big"), "a".repeat(20_000), "notifications carry everything");

  const all = await s.call("process/read", { processId: "big" });
  const first = all.chunks[0].seq;
  assert.ok(first > 1, "the oldest chunks were evicted");
  assert.deepEqual(all.evicted, { fromSeq: 1, toSeq: first - 1 });
  const retained = all.chunks.map((c: Msg) => unb64(c.chunk)).join("");
  assert.ok(retained.length <= cap || all.chunks.length === 1, `${retained.length} bytes kept`);
  // What is retained is exactly the newest notifications, seq for seq.
  assert.deepEqual(
    all.chunks.map((c: Msg) => [c.seq, c.chunk]),
    notes.slice(notes.length - all.chunks.length).map((m) => [m.params.seq, m.params.chunk]),
  );
  assert.equal(all.nextSeq, lastSeq + 1);
  assert.equal(all.exited, true);

  // Reading from inside the retained range reports no gap.
  const tail = await s.call("process/read", { processId: "big", afterSeq: first });
  assert.equal(tail.evicted, undefined);
  assert.equal(tail.chunks[0]?.seq ?? tail.nextSeq, first + 1);

  // A paged read from the start names the gap and stops early: no exit yet.
  const page = await s.call("process/read", { processId: "big", afterSeq: 0, maxBytes: 1 });
  assert.deepEqual(page.evicted, { fromSeq: 1, toSeq: first - 1 });
  assert.equal(page.chunks.length, 1);
  assert.equal(page.chunks[0].seq, first);
  assert.equal(page.exited, all.chunks.length === 1);
});
