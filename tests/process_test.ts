/**
 * Black-box tests of `process/start`, `process/write`, `process/terminate`
 * and the `process/output` / `process/exited` notifications.
 */
import assert from "node:assert/strict";
import { b64, ENV, eventually, type Msg, TestServer } from "./harness.ts";

function exitedOf(s: TestServer, id: string): Msg[] {
  return s.messages.filter((m) => m.method === "process/exited" && m.params.processId === id);
}

Deno.test("pipe process: separate stdout and stderr, exit code, one exited", async () => {
  await using s = await TestServer.start();
  const res = await s.start("p1", ["sh", "-c", "echo out; echo err >&2; echo more; exit 3"]);
  assert.deepEqual(res.result, { processId: "p1" });
  const exited = await s.waitExited("p1");
  assert.equal(exited.params.exitCode, 3);
  assert.equal(exited.params.signal, null);
  assert.equal(s.outputText("p1", "stdout"), "out\nmore\n");
  assert.equal(s.outputText("p1", "stderr"), "err\n");
  assert.deepEqual(s.outputsOf("p1").filter((m) => m.params.stream === "pty"), []);
  // Output notifications carry increasing seqs shared by both streams.
  const seqs = s.outputsOf("p1").map((m) => m.params.seq);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
  assert.equal(exitedOf(s, "p1").length, 1);
  assert.equal((await s.close()).code, 0);
});

Deno.test("the child gets exactly the env given, the cwd and arg0", async () => {
  await using s = await TestServer.start();
  await s.start("env", ["env"], { env: { PATH: ENV.PATH, ONLY_THIS: "x y=z" } });
  await s.waitExited("env");
  assert.deepEqual(
    s.outputText("env", "stdout").trim().split("\n").sort(),
    [`PATH=${ENV.PATH}`, "ONLY_THIS=x y=z"].sort(),
  );
  await s.start("cwd", ["pwd"], { cwd: "/usr" });
  await s.waitExited("cwd");
  assert.equal(s.outputText("cwd"), "/usr\n");
  await s.start("arg0", ["sh", "-c", 'tr "\\0" " " < /proc/$$/cmdline'], { arg0: "renamed-sh" });
  await s.waitExited("arg0");
  assert.match(s.outputText("arg0"), /^renamed-sh -c /);
  await s.start("uri", ["pwd"], { cwd: "file:///usr/bin" });
  await s.waitExited("uri");
  assert.equal(s.outputText("uri"), "/usr/bin\n");
});

Deno.test("pty process: cat echoes written input; one stream named pty", async () => {
  await using s = await TestServer.start();
  const res = await s.start("tty", ["cat"], { tty: true });
  assert.deepEqual(res.result, { processId: "tty" });
  const write = await s.request("process/write", { processId: "tty", chunk: b64("hello\n") });
  assert.deepEqual(write.result, { accepted: true });
  // The terminal echoes the input, then cat writes it back: two lines.
  await eventually(
    () => (s.outputText("tty").match(/hello\r\n/g) ?? []).length >= 2,
    10_000,
    "hello echoed and copied",
  );
  assert.ok(s.outputsOf("tty").every((m) => m.params.stream === "pty"));
  const term = await s.request("process/terminate", { processId: "tty" });
  assert.deepEqual(term.result, { running: true });
  const exited = await s.waitExited("tty");
  assert.equal(exited.params.exitCode, 137);
});

Deno.test("pty process: stdin, stdout and stderr are the terminal; exit code", async () => {
  await using s = await TestServer.start();
  await s.start("t", ["sh", "-c", "test -t 0 && test -t 1 && test -t 2 && echo all-tty; exit 5"], {
    tty: true,
  });
  const exited = await s.waitExited("t");
  assert.equal(exited.params.exitCode, 5);
  assert.equal(s.outputText("t"), "all-tty\r\n");
});

Deno.test("pipe process: stdin is closed unless pipeStdin; writing is -32600", async () => {
  await using s = await TestServer.start();
  await s.start("closed", ["sh", "-c", "cat; echo eof-at-once"]);
  const write = await s.request("process/write", { processId: "closed", chunk: b64("x") });
  assert.equal(write.error.code, -32600);
  assert.match(write.error.message, /stdin of process closed is closed/);
  await s.waitExited("closed");
  assert.equal(s.outputText("closed"), "eof-at-once\n");
});

Deno.test("pipe process with pipeStdin: writes reach the child, closeStdin ends it", async () => {
  await using s = await TestServer.start();
  await s.start("cat", ["cat"], { pipeStdin: true });
  for (const part of ["one ", "two ", "three\n"]) {
    const res = await s.request("process/write", { processId: "cat", chunk: b64(part) });
    assert.deepEqual(res.result, { accepted: true });
  }
  const binary = new Uint8Array([0, 1, 2, 255, 254, 10]);
  await s.request("process/write", { processId: "cat", chunk: b64(binary) });
  await s.request("process/closeStdin", { processId: "cat" });
  const exited = await s.waitExited("cat");
  assert.equal(exited.params.exitCode, 0);
  assert.deepEqual(
    [...s.outputBytes("cat", "stdout")],
    [...new TextEncoder().encode("one two three\n"), ...binary],
  );
});

for (const tty of [false, true]) {
  Deno.test(`killed by a signal from outside: exitCode 128+N and signal (tty: ${tty})`, async () => {
    await using s = await TestServer.start();
    await s.start("term", ["sh", "-c", "kill -TERM $$"], { tty });
    const term = await s.waitExited("term");
    assert.equal(term.params.exitCode, 143);
    assert.equal(term.params.signal, "SIGTERM");
    await s.start("segv", ["sh", "-c", "kill -SEGV $$"], { tty });
    const segv = await s.waitExited("segv");
    assert.equal(segv.params.exitCode, 139);
    assert.equal(segv.params.signal, "SIGSEGV");
    // A plain exit with a high code is not a signal.
    await s.start("high", ["sh", "-c", "exit 143"], { tty });
    const high = await s.waitExited("high");
    assert.equal(high.params.exitCode, 143);
    assert.equal(high.params.signal, null);
  });
}

Deno.test("a write the child does not read waits without blocking; killing the child answers it", async () => {
  await using s = await TestServer.start();
  await s.start("full", ["sleep", "300"], { pipeStdin: true });
  const id = s.newId();
  // Far more than a pipe holds: the write cannot complete while nobody reads.
  const chunk = b64(new Uint8Array(4 * 1024 * 1024));
  s.send({ id, method: "process/write", params: { processId: "full", chunk } });
  const read = await s.request("process/read", { processId: "full" });
  assert.deepEqual(read.result.chunks, []);
  assert.equal(s.indexOf((m) => m.id === id), -1, "the write completed although nobody read");
  await s.request("process/terminate", { processId: "full" });
  await s.waitExited("full");
  const write = await s.response(id);
  assert.equal(write.error.code, -32603);
  assert.equal(write.error.data?.errno, "EPIPE");
  assert.match(write.error.message, /full/);
});

Deno.test("terminate: running, unknown and exited processes", async () => {
  await using s = await TestServer.start();
  for (const tty of [false, true]) {
    const id = `sleeper-${tty}`;
    await s.start(id, ["sleep", "300"], { tty });
    const running = await s.request("process/terminate", { processId: id });
    assert.deepEqual(running.result, { running: true });
    const exited = await s.waitExited(id);
    assert.equal(exited.params.exitCode, 137);
    assert.equal(exited.params.signal, "SIGKILL");
    const again = await s.request("process/terminate", { processId: id });
    assert.deepEqual(again.result, { running: false });
    // Still retained: read reports the exit.
    const read = await s.request("process/read", { processId: id });
    assert.equal(read.result.exited, true);
    assert.equal(read.result.exitCode, 137);
  }
  const unknown = await s.request("process/terminate", { processId: "never-started" });
  assert.deepEqual(unknown.result, { running: false });
  await s.start("done", ["true"]);
  await s.waitExited("done");
  const done = await s.request("process/terminate", { processId: "done" });
  assert.deepEqual(done.result, { running: false });
});

Deno.test("terminate of a process still starting kills it as soon as it exists", async () => {
  await using s = await TestServer.start();
  const startId = s.newId();
  const termId = s.newId();
  // Both in one write: terminate is handled while start may still be spawning.
  s.writeRaw(
    JSON.stringify({
      id: startId,
      method: "process/start",
      params: { processId: "quick", argv: ["sleep", "300"], cwd: "/", env: ENV, tty: false },
    }) + "\n" +
      JSON.stringify({ id: termId, method: "process/terminate", params: { processId: "quick" } }) +
      "\n",
  );
  assert.deepEqual((await s.response(startId)).result, { processId: "quick" });
  assert.deepEqual((await s.response(termId)).result, { running: true });
  const exited = await s.waitExited("quick");
  assert.equal(exited.params.exitCode, 137);
});

Deno.test("ordering: start response before any output; all output before exited", async () => {
  await using s = await TestServer.start();
  const ids: string[] = [];
  const starts: Promise<Msg>[] = [];
  for (let i = 0; i < 16; i++) {
    const id = `order-${i}`;
    ids.push(id);
    const tty = i % 2 === 1;
    // Output at once, from both streams, and after the leader's exit from a
    // background child still holding the pipes briefly.
    starts.push(
      s.start(id, ["sh", "-c", "echo a; echo b >&2; (sleep 0.05; echo late) & echo c"], { tty }),
    );
  }
  const responses = await Promise.all(starts);
  await Promise.all(ids.map((id) => s.waitExited(id)));
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const startAt = s.messages.indexOf(responses[i]);
    const outputs = s.outputsOf(id).map((m) => s.messages.indexOf(m));
    const exitedAt = s.messages.indexOf(exitedOf(s, id)[0]);
    assert.ok(outputs.length > 0, `${id} had no output`);
    assert.ok(startAt < Math.min(...outputs), `${id}: output before the start response`);
    assert.ok(Math.max(...outputs) < exitedAt, `${id}: output after exited`);
    assert.equal(exitedOf(s, id).length, 1);
    // On a PTY the leader's exit hangs up its session, so the background
    // child dies; on pipes it keeps them open and its output must arrive.
    if (i % 2 === 0) assert.match(s.outputText(id), /late/, `${id}: lost the late output`);
  }
});

Deno.test("exited carries timing fields", async () => {
  await using s = await TestServer.start();
  const before = Date.now();
  await s.start("timed", ["sleep", "0.1"]);
  const exited = await s.waitExited("timed");
  const { startedAtMs, exitedAtMs, durationMs } = exited.params;
  assert.ok(startedAtMs >= before - 1000 && startedAtMs <= exitedAtMs);
  assert.ok(durationMs >= 100, `durationMs ${durationMs}`);
});
