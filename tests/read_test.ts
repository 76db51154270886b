/**
 * Black-box tests of `process/read`: `afterSeq`, `maxBytes` (first chunk
 * returned whole), `nextSeq`, `waitMs` wake-ups, and that a waiting read
 * never blocks other requests.
 */
import assert from "node:assert/strict";
import { b64, type Msg, TestServer, unb64 } from "./harness.ts";
import { feedChunks, readProcess } from "./server_helpers.ts";

/**
 * Start `cat` on pipes and feed it `parts` one at a time, waiting for each
 * to come back, so every part is exactly one output chunk.
 */
async function catWithChunks(s: TestServer, id: string, parts: string[]): Promise<void> {
  const res = await s.start(id, ["cat"], { pipeStdin: true });
  assert.deepEqual(res.result, { processId: id });
  await feedChunks(s, id, parts);
  assert.deepEqual(
    s.outputsOf(id).map((m) => unb64(m.params.chunk)),
    parts,
    "cat did not echo one chunk per write",
  );
}

const texts = (r: Msg): string[] => r.chunks.map((c: Msg) => unb64(c.chunk));
const seqs = (r: Msg): number[] => r.chunks.map((c: Msg) => c.seq);

Deno.test("read: afterSeq, nextSeq and streams", async () => {
  await using s = await TestServer.start();
  await catWithChunks(s, "c", ["aaaa", "bb", "cccccc", "d"]);
  const all = await readProcess(s, { processId: "c" });
  assert.deepEqual(texts(all), ["aaaa", "bb", "cccccc", "d"]);
  assert.deepEqual(seqs(all), [1, 2, 3, 4]);
  assert.ok(all.chunks.every((c: Msg) => c.stream === "stdout"));
  assert.equal(all.nextSeq, 5);
  assert.equal(all.exited, false);
  assert.equal(all.exitCode, null);
  assert.deepEqual(seqs(await readProcess(s, { processId: "c", afterSeq: 2 })), [3, 4]);
  const none = await readProcess(s, { processId: "c", afterSeq: 4 });
  assert.deepEqual(none.chunks, []);
  assert.equal(none.nextSeq, 5, "nextSeq is the next seq to be assigned when nothing is returned");
  const beyond = await readProcess(s, { processId: "c", afterSeq: 99 });
  assert.deepEqual(beyond.chunks, []);
  assert.equal(beyond.nextSeq, 5);
  // Seqs in reads match the seqs in notifications.
  assert.deepEqual(s.outputsOf("c").map((m) => m.params.seq), [1, 2, 3, 4]);
  await s.request("process/closeStdin", { processId: "c" });
  await s.waitExited("c");
  const end = await readProcess(s, { processId: "c", afterSeq: 4 });
  assert.deepEqual(end.chunks, []);
  assert.equal(end.exited, true);
  assert.equal(end.exitCode, 0);
});

Deno.test("read: maxBytes stops before the total would exceed it; first chunk whole", async () => {
  await using s = await TestServer.start();
  await catWithChunks(s, "m", ["aaaa", "bb", "cccccc", "d"]);
  const six = await readProcess(s, { processId: "m", maxBytes: 6 });
  assert.deepEqual(texts(six), ["aaaa", "bb"]);
  assert.equal(six.nextSeq, 3);
  const five = await readProcess(s, { processId: "m", maxBytes: 5 });
  assert.deepEqual(texts(five), ["aaaa"]);
  assert.equal(five.nextSeq, 2);
  // The first chunk is returned even though it alone exceeds maxBytes.
  const one = await readProcess(s, { processId: "m", afterSeq: 2, maxBytes: 1 });
  assert.deepEqual(texts(one), ["cccccc"]);
  assert.equal(one.nextSeq, 4);
  const zero = await readProcess(s, { processId: "m", maxBytes: 0 });
  assert.deepEqual(texts(zero), ["aaaa"]);
  // Paging with nextSeq visits every chunk once.
  await s.request("process/closeStdin", { processId: "m" });
  await s.waitExited("m");
  const pages: string[][] = [];
  let after = 0;
  let last: Msg;
  do {
    last = await readProcess(s, { processId: "m", afterSeq: after, maxBytes: 7 });
    pages.push(texts(last));
    after = last.nextSeq - 1;
    // The exit is reported only with the page that holds the last chunk.
    if (!last.exited) assert.ok(last.chunks.length > 0, "a page before the end was empty");
  } while (!last.exited);
  assert.deepEqual(pages, [["aaaa", "bb"], ["cccccc", "d"]]);
  assert.equal(last.exitCode, 0);
});

Deno.test("read: stdout and stderr chunks share one seq series", async () => {
  await using s = await TestServer.start();
  await s.start("both", ["sh", "-c", "echo out; sleep 0.05; echo err >&2; sleep 0.05; echo out2"]);
  await s.waitExited("both");
  const r = await readProcess(s, { processId: "both" });
  assert.equal(r.exited, true);
  const byStream = (name: string) =>
    r.chunks.filter((c: Msg) => c.stream === name).map((c: Msg) => unb64(c.chunk)).join("");
  assert.equal(byStream("stdout"), "out\nout2\n");
  assert.equal(byStream("stderr"), "err\n");
  assert.deepEqual(seqs(r), r.chunks.map((_: Msg, i: number) => i + 1));
});

Deno.test("read: waitMs wakes on output", async () => {
  await using s = await TestServer.start();
  await s.start("w", ["cat"], { pipeStdin: true });
  const id = s.newId();
  s.send({ id, method: "process/read", params: { processId: "w", waitMs: 20_000 } });
  // The read is parked; a write makes output appear.
  await s.request("process/write", { processId: "w", chunk: b64("ping") });
  const res = await s.response(id);
  assert.deepEqual(texts(res.result), ["ping"]);
  assert.equal(res.result.nextSeq, 2);
  assert.equal(res.result.exited, false);
  await s.request("process/closeStdin", { processId: "w" });
  await s.waitExited("w");
});

Deno.test("read: waitMs wakes on exit with nothing to return", async () => {
  await using s = await TestServer.start();
  await s.start("silent", ["cat"], { pipeStdin: true });
  const id = s.newId();
  s.send({ id, method: "process/read", params: { processId: "silent", waitMs: 20_000 } });
  await s.request("process/closeStdin", { processId: "silent" });
  const res = await s.response(id);
  assert.deepEqual(res.result.chunks, []);
  assert.equal(res.result.exited, true);
  assert.equal(res.result.exitCode, 0);
  assert.equal(res.result.nextSeq, 1);
});

Deno.test("read: waitMs that expires answers empty", async () => {
  await using s = await TestServer.start();
  await s.start("quiet", ["cat"], { pipeStdin: true });
  const res = await readProcess(s, { processId: "quiet", waitMs: 50 });
  assert.deepEqual(res.chunks, []);
  assert.equal(res.nextSeq, 1);
  assert.equal(res.exited, false);
  await s.request("process/terminate", { processId: "quiet" });
  await s.waitExited("quiet");
});

Deno.test("read: a waiting read does not block other requests, even on the same process", async () => {
  await using s = await TestServer.start();
  await s.start("a", ["cat"], { pipeStdin: true });
  const waiting = [s.newId(), s.newId()];
  for (const id of waiting) {
    s.send({ id, method: "process/read", params: { processId: "a", waitMs: 20_000 } });
  }
  // Everything below is answered while both reads wait.
  await s.start("b", ["echo", "from b"]);
  await s.waitExited("b");
  assert.deepEqual(texts(await readProcess(s, { processId: "b" })), ["from b\n"]);
  assert.deepEqual((await readProcess(s, { processId: "a" })).chunks, []);
  assert.equal((await s.request("process/read", { processId: "zz" })).error.code, -32600);
  for (const id of waiting) assert.equal(s.indexOf((m) => m.id === id), -1);
  await s.request("process/write", { processId: "a", chunk: b64("x") });
  for (const id of waiting) assert.deepEqual(texts((await s.response(id)).result), ["x"]);
  await s.request("process/terminate", { processId: "a" });
  await s.waitExited("a");
});

Deno.test("read: a pending wait does not keep the server alive after EOF", async () => {
  const s = await TestServer.start();
  try {
    await s.start("hang", ["cat"], { pipeStdin: true });
    s.send({ id: "w", method: "process/read", params: { processId: "hang", waitMs: 60_000 } });
    await readProcess(s, { processId: "hang" });
    // EOF on stdin: the server kills the process and exits promptly instead
    // of sitting out the 60 s wait.
    const { code } = await s.close();
    assert.equal(code, 0);
  } finally {
    s.kill();
  }
});
