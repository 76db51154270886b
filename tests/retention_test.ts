/**
 * Black-box tests of output retention (`--max-output-bytes`, oldest chunks
 * evicted, the `evicted` gap reported) and exited-process retention
 * (`--exited-retention-ms`, then the id is free again).
 */
import assert from "node:assert/strict";
import { eventually, type Msg, TestServer, unb64 } from "./harness.ts";
import { feedChunks, readProcess } from "./server_helpers.ts";

Deno.test("retention: the oldest chunks are evicted past the cap; evicted reports the gap", async () => {
  await using s = await TestServer.start(["--max-output-bytes", "1024"]);
  await s.start("r", ["cat"], { pipeStdin: true });
  const parts = ["a", "b", "c", "d", "e"].map((ch) => ch.repeat(400));
  await feedChunks(s, "r", parts);
  // 5 x 400 bytes with a 1024-byte cap: seqs 4 and 5 (800 bytes) remain.
  const all = await readProcess(s, { processId: "r" });
  assert.deepEqual(all.chunks.map((c: Msg) => c.seq), [4, 5]);
  assert.deepEqual(all.chunks.map((c: Msg) => unb64(c.chunk)), [parts[3], parts[4]]);
  assert.deepEqual(all.evicted, { fromSeq: 1, toSeq: 3 });
  assert.equal(all.nextSeq, 6);
  assert.deepEqual((await readProcess(s, { processId: "r", afterSeq: 2 })).evicted, {
    fromSeq: 3,
    toSeq: 3,
  });
  const noGap = await readProcess(s, { processId: "r", afterSeq: 3 });
  assert.equal(noGap.evicted, undefined);
  assert.deepEqual(noGap.chunks.map((c: Msg) => c.seq), [4, 5]);
  // Notifications are not subject to the cap: every byte was delivered.
  assert.equal(s.outputText("r"), parts.join(""));
  await s.request("process/closeStdin", { processId: "r" });
  await s.waitExited("r");
});

Deno.test("retention: a chunk larger than the cap is kept alone", async () => {
  await using s = await TestServer.start(["--max-output-bytes", "1024"]);
  await s.start("big", ["cat"], { pipeStdin: true });
  await feedChunks(s, "big", ["x".repeat(100), "y".repeat(1500)]);
  const r = await readProcess(s, { processId: "big" });
  assert.deepEqual(r.chunks.map((c: Msg) => c.seq), [2]);
  assert.equal(unb64(r.chunks[0].chunk), "y".repeat(1500));
  assert.deepEqual(r.evicted, { fromSeq: 1, toSeq: 1 });
  // The next chunk evicts the oversized one.
  await feedChunks(s, "big", ["z"]);
  const after = await readProcess(s, { processId: "big", afterSeq: 1 });
  assert.deepEqual(after.chunks.map((c: Msg) => c.seq), [3]);
  assert.deepEqual(after.evicted, { fromSeq: 2, toSeq: 2 });
  await s.request("process/closeStdin", { processId: "big" });
  await s.waitExited("big");
});

Deno.test("retention: a flood of output far beyond the cap", async () => {
  await using s = await TestServer.start(["--max-output-bytes", "4K"]);
  // 256 KiB through a 4 KiB window, written in pauses so that the server's
  // merging of reads made in one turn still leaves many chunks.
  await s.start("flood", [
    "sh",
    "-c",
    "for i in $(seq 64); do head -c 4096 /dev/zero; sleep 0.005; done",
  ]);
  await s.waitExited("flood");
  assert.equal(s.outputBytes("flood").length, 262144);
  const r = await readProcess(s, { processId: "flood" });
  const kept = r.chunks.reduce((n: number, c: Msg) => n + unb64(c.chunk).length, 0);
  assert.ok(r.chunks.length >= 1);
  // Only the newest chunk may exceed the cap on its own.
  assert.ok(kept <= 4096 || r.chunks.length === 1, `kept ${kept} bytes in ${r.chunks.length}`);
  assert.equal(r.evicted.fromSeq, 1);
  assert.equal(r.evicted.toSeq, r.chunks[0].seq - 1);
  assert.equal(r.exited, true);
});

Deno.test("exited retention: readable until --exited-retention-ms, then the id is free", async () => {
  // Long enough that the checks before expiry hold on a loaded machine.
  await using s = await TestServer.start(["--exited-retention-ms", "1000"]);
  await s.start("gone", ["echo", "first life"]);
  await s.waitExited("gone");
  const retained = await readProcess(s, { processId: "gone" });
  assert.equal(retained.exited, true);
  assert.equal(unb64(retained.chunks[0].chunk), "first life\n");
  const dup = await s.start("gone", ["true"]);
  assert.equal(dup.error.code, -32600);
  assert.match(dup.error.message, /duplicate process id gone/);
  await eventually(
    async () => (await s.request("process/read", { processId: "gone" })).error?.code === -32600,
    10_000,
    "the exited process to expire",
  );
  const again = await s.start("gone", ["echo", "second life"]);
  assert.deepEqual(again.result, { processId: "gone" });
  await s.waitFor(
    (m) =>
      m.method === "process/exited" && m.params.processId === "gone" &&
      s.messages.indexOf(m) > s.messages.indexOf(again),
  );
  const second = await readProcess(s, { processId: "gone" });
  assert.equal(unb64(second.chunks[0].chunk), "second life\n");
  assert.equal(second.chunks[0].seq, 1, "a reused id starts a new seq series");
});

Deno.test("exited retention does not apply to running processes", async () => {
  await using s = await TestServer.start(["--exited-retention-ms", "50"]);
  await s.start("alive", ["cat"], { pipeStdin: true });
  // Many retention periods pass while it runs.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await readProcess(s, { processId: "alive" })).exited, false);
  await s.request("process/closeStdin", { processId: "alive" });
  await s.waitExited("alive");
});

Deno.test("exited retention: a terminated process keeps its id reserved until it expires", async () => {
  await using s = await TestServer.start(["--exited-retention-ms", "300"]);
  await s.start("t", ["sleep", "300"]);
  assert.deepEqual((await s.request("process/terminate", { processId: "t" })).result, {
    running: true,
  });
  await s.waitExited("t");
  assert.equal((await s.start("t", ["true"])).error.code, -32600);
  await eventually(
    async () => !(await s.start("t", ["true"])).error,
    10_000,
    "the id to be free again",
  );
});
