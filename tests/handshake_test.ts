/**
 * Black-box tests of the handshake (PROTOCOL.md section 2) and of the
 * message-level rules of section 1: pipelining, out-of-order responses,
 * ids echoed exactly, no `jsonrpc` member sent.
 */
import assert from "node:assert/strict";
import { b64, ENV, type Msg, TestServer, unb64 } from "./harness.ts";

Deno.test("initialize answers the protocol version, server info and capabilities", async () => {
  await using s = new TestServer();
  const init = await s.request("initialize", { clientName: "handshake-test" });
  assert.equal(init.result.protocolVersion, "exec-server.v0");
  assert.equal(init.result.serverInfo.name, "exec-server");
  assert.match(init.result.serverInfo.version, /^\d+\.\d+\.\d+/);
  const caps = init.result.capabilities;
  assert.equal(typeof caps, "object");
  for (
    const m of ["process/start", "process/read", "process/write", "process/terminate"]
  ) {
    assert.ok(caps.methods.includes(m), `capabilities.methods lacks ${m}`);
  }
  s.notify("initialized", {});
  const res = await s.start("p", ["true"]);
  assert.deepEqual(res.result, { processId: "p" });
  await s.waitExited("p");
  assert.equal((await s.close()).code, 0);
});

Deno.test("no message from the server carries a jsonrpc member; a client's is accepted", async () => {
  await using s = new TestServer();
  s.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { clientName: "j" } });
  const init = await s.response(1);
  assert.equal(init.result.protocolVersion, "exec-server.v0");
  s.send({ jsonrpc: "2.0", method: "initialized" });
  s.send({
    jsonrpc: "2.0",
    id: 2,
    method: "process/start",
    params: { processId: "j", argv: ["echo", "hi"], cwd: "/", env: ENV, tty: false },
  });
  await s.waitExited("j");
  assert.deepEqual((await s.response(2)).result, { processId: "j" });
  for (const m of s.messages) assert.ok(!("jsonrpc" in m), `jsonrpc sent in ${JSON.stringify(m)}`);
});

Deno.test("ids are echoed exactly: strings, zero, negative and large integers", async () => {
  await using s = await TestServer.start();
  const ids = ["abc", "", "42", 0, -7, 2 ** 53 - 1, "ünïcödé"];
  for (const id of ids) {
    s.send({ id, method: "process/read", params: { processId: "none" } });
  }
  for (const id of ids) {
    const res = await s.response(id);
    assert.deepEqual(res.id, id);
    assert.equal(res.error.code, -32600);
  }
});

Deno.test("pipelined: initialize, initialized and first requests in one write", async () => {
  await using s = new TestServer();
  const start = {
    processId: "pipelined",
    argv: ["sh", "-c", "echo pipelined"],
    cwd: "/tmp",
    env: ENV,
    tty: false,
  };
  s.writeRaw(
    [
      { id: 1, method: "initialize", params: { clientName: "pipelined" } },
      { method: "initialized", params: { anything: [1, 2] } },
      { id: 2, method: "process/start", params: start },
      { id: 3, method: "process/read", params: { processId: "pipelined", waitMs: 5000 } },
    ].map((m) => JSON.stringify(m) + "\n").join(""),
  );
  assert.equal((await s.response(1)).result.protocolVersion, "exec-server.v0");
  assert.deepEqual((await s.response(2)).result, { processId: "pipelined" });
  const read = await s.response(3);
  assert.equal(read.error, undefined, JSON.stringify(read));
  await s.waitExited("pipelined");
  assert.equal(s.outputText("pipelined", "stdout"), "pipelined\n");
  // Answers to a pipelined batch still come in request order here, since
  // nothing in it had to wait.
  assert.ok(s.indexOf((m) => m.id === 1) < s.indexOf((m) => m.id === 2));
});

Deno.test("pipelined in one write including the initialized notification without params", async () => {
  await using s = new TestServer();
  s.writeRaw(
    '{"id":1,"method":"initialize","params":{"clientName":"x"}}\n{"method":"initialized"}\n' +
      '{"id":2,"method":"process/read","params":{"processId":"nope"}}\n',
  );
  await s.response(1);
  const res = await s.response(2);
  // Past the handshake gate: the error is about the id, not the handshake.
  assert.equal(res.error.code, -32600);
  assert.match(res.error.message, /unknown process id nope/);
});

Deno.test("out-of-order responses: a waiting read is answered after a later quick request", async () => {
  await using s = await TestServer.start();
  const started = await s.start("cat", ["cat"], { pipeStdin: true });
  assert.equal(started.error, undefined, JSON.stringify(started));
  const slowId = s.newId();
  s.send({ id: slowId, method: "process/read", params: { processId: "cat", waitMs: 15_000 } });
  // The quick request goes out after the slow one and must not wait for it.
  const quick = await s.request("process/read", { processId: "cat" });
  assert.deepEqual(quick.result.chunks, []);
  assert.equal(s.indexOf((m) => m.id === slowId), -1, "the waiting read answered early");
  const write = await s.request("process/write", { processId: "cat", chunk: b64("wake\n") });
  assert.deepEqual(write.result, { accepted: true });
  const slow = await s.response(slowId);
  assert.equal(slow.result.chunks.length, 1);
  assert.equal(unb64(slow.result.chunks[0].chunk), "wake\n");
  assert.ok(s.indexOf((m) => m.id === quick.id) < s.indexOf((m) => m.id === slowId));
  await s.request("process/terminate", { processId: "cat" });
  await s.waitExited("cat");
});

Deno.test("a second initialize is rejected and the first handshake stays valid", async () => {
  await using s = await TestServer.start();
  const again = await s.request("initialize", { clientName: "again" });
  assert.equal(again.error.code, -32600);
  assert.match(again.error.message, /initialize/);
  const res = await s.start("still-ok", ["true"]);
  assert.deepEqual(res.result, { processId: "still-ok" });
  await s.waitExited("still-ok");
});

Deno.test("a repeated initialized notification is harmless", async () => {
  await using s = await TestServer.start();
  s.notify("initialized", {});
  s.notify("initialized");
  const res = await s.start("twice", ["true"]);
  assert.deepEqual(res.result, { processId: "twice" });
  await s.waitExited("twice");
});

Deno.test("unknown notifications and client responses are ignored without an answer", async () => {
  await using s = await TestServer.start();
  s.notify("no/such/notification", { x: 1 });
  s.send({ id: 77, result: { stray: true } });
  s.send({ id: 78, error: { code: -1, message: "stray error" } });
  s.send({ id: null, error: { code: -1, message: "stray error without id" } });
  const res = await s.request("process/read", { processId: "none" });
  assert.equal(res.error.code, -32600);
  const stray = s.messages.filter((m: Msg) => m.id === 77 || m.id === 78 || m.id === null);
  assert.deepEqual(stray, []);
  assert.equal((await s.close()).code, 0);
});
