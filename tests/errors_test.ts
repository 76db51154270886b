/**
 * Black-box tests of every error code in PROTOCOL.md section 3. Each error
 * message must name the offending value.
 */
import assert from "node:assert/strict";
import { b64, ENV, type Msg, TestServer } from "./harness.ts";

function assertError(res: Msg, code: number, message: RegExp): void {
  assert.ok(res.error, `expected error ${code}, got ${JSON.stringify(res)}`);
  assert.equal(res.error.code, code, JSON.stringify(res.error));
  assert.match(res.error.message, message);
  assert.ok(!("result" in res), "an error response has no result");
}

const START = { cwd: "/tmp", env: ENV, tty: false };

Deno.test("-32700: a line that is not JSON is answered with id null; the session goes on", async () => {
  await using s = await TestServer.start();
  s.writeRaw('{"id": 5, "method": "process/read",\n');
  const err = await s.waitFor((m) => m.error?.code === -32700);
  assert.equal(err.id, null);
  assert.match(err.error.message, /parse error/);
  s.writeRaw("not json at all\n");
  await s.waitFor((m) => m.error?.code === -32700 && m !== err);
  const ok = await s.start("after", ["true"]);
  assert.deepEqual(ok.result, { processId: "after" });
  await s.waitExited("after");
});

Deno.test("-32700: a line that is not UTF-8", async () => {
  await using s = await TestServer.start();
  s.writeRaw(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
  const err = await s.waitFor((m) => m.error?.code === -32700);
  assert.equal(err.id, null);
  assert.match(err.error.message, /UTF-8/);
});

Deno.test("-32600: requests before the handshake", async () => {
  await using s = new TestServer();
  const early = await s.request("process/start", {
    processId: "early",
    argv: ["true"],
    ...START,
  });
  assertError(early, -32600, /call initialize first.*process\/start/);
  await s.request("initialize", { clientName: "t" });
  const between = await s.request("process/read", { processId: "x" });
  assertError(between, -32600, /send initialized first.*process\/read/);
  // Unknown methods are gated too: nothing is revealed before the handshake.
  const unknown = await s.request("no/such", {});
  assertError(unknown, -32600, /send initialized first.*no\/such/);
  s.notify("initialized");
  const read = await s.request("process/read", { processId: "x" });
  assertError(read, -32600, /unknown process id x/);
});

Deno.test("-32600: duplicate initialize", async () => {
  await using s = await TestServer.start();
  assertError(await s.request("initialize", { clientName: "again" }), -32600, /initialize/);
});

Deno.test("-32600: duplicate process id, while running and while retained after exit", async () => {
  await using s = await TestServer.start();
  assert.ok((await s.start("dup", ["sleep", "30"])).result);
  assertError(await s.start("dup", ["true"]), -32600, /duplicate process id dup/);
  await s.request("process/terminate", { processId: "dup" });
  await s.waitExited("dup");
  assertError(await s.start("dup", ["true"]), -32600, /duplicate process id dup/);
});

Deno.test("-32600: unknown process id in read, write, closeStdin, resize and signal", async () => {
  await using s = await TestServer.start();
  const cases: [string, Msg][] = [
    ["process/read", { processId: "proc-7" }],
    ["process/write", { processId: "proc-7", chunk: b64("x") }],
    ["process/closeStdin", { processId: "proc-7" }],
    ["process/resize", { processId: "proc-7", rows: 10, cols: 10 }],
    ["process/signal", { processId: "proc-7", signal: "SIGINT" }],
  ];
  for (const [method, params] of cases) {
    assertError(await s.request(method, params), -32600, /unknown process id proc-7/);
  }
  // terminate is not an error for an unknown id (see process_test).
  assert.deepEqual((await s.request("process/terminate", { processId: "proc-7" })).result, {
    running: false,
  });
});

Deno.test("-32600: write to a process whose stdin was closed, and to an exited process", async () => {
  await using s = await TestServer.start();
  assert.ok((await s.start("cat", ["cat"], { pipeStdin: true })).result);
  assert.deepEqual((await s.request("process/closeStdin", { processId: "cat" })).result, {});
  assertError(
    await s.request("process/write", { processId: "cat", chunk: b64("late") }),
    -32600,
    /stdin of process cat is closed/,
  );
  await s.waitExited("cat");
  assertError(
    await s.request("process/write", { processId: "cat", chunk: b64("later") }),
    -32600,
    /stdin of process cat is closed/,
  );
});

Deno.test("-32600: sandbox modes other than none and restricted", async () => {
  await using s = await TestServer.start();
  assertError(
    await s.start("sb1", ["true"], { sandbox: { mode: "hostDefault" } }),
    -32600,
    /unsupported sandbox mode "hostDefault"/,
  );
  assertError(
    await s.start("sb2", ["true"], { sandbox: { mode: "seatbelt-ish" } }),
    -32600,
    /unsupported sandbox mode "seatbelt-ish"/,
  );
  assertError(
    await s.start("sb3", ["true"], { sandbox: "none" }),
    -32602,
    /sandbox must be an object/,
  );
  // The rejected ids were never reserved.
  assert.ok((await s.start("sb1", ["true"], { sandbox: { mode: "none" } })).result);
  assert.ok((await s.start("sb2", ["true"], { sandbox: null })).result);
  await s.waitExited("sb1");
  await s.waitExited("sb2");
});

Deno.test("-32600: a message larger than --max-message-bytes; the session goes on", async () => {
  await using s = await TestServer.start(["--max-message-bytes", "4096"]);
  const big = JSON.stringify({
    id: 9,
    method: "process/write",
    params: { processId: "x", chunk: b64("a".repeat(6000)) },
  });
  s.writeRaw(big + "\n");
  const err = await s.waitFor((m) => m.error?.code === -32600);
  assert.equal(err.id, null);
  assert.match(err.error.message, new RegExp(`${big.length} bytes.*4096`));
  // Just under the limit is fine.
  const fits = await s.request("process/read", { processId: "p".repeat(3900) });
  assertError(fits, -32600, /unknown process id p{3900}/);
});

Deno.test("-32600: valid JSON that is not a request or notification", async () => {
  await using s = await TestServer.start();
  const lines = ["[1,2,3]", "42", '"text"', "null", '{"foo":1}', '{"id":11,"foo":1}'];
  for (const line of lines) s.writeRaw(line + "\n");
  const errors = await Promise.all(
    lines.map((_, i) =>
      s.waitFor(
        (m) => m.error?.code === -32600 && s.messages.filter((x) => x.error).indexOf(m) === i,
      )
    ),
  );
  assert.match(errors[0].error.message, /array/);
  assert.match(errors[1].error.message, /42/);
  assert.match(errors[2].error.message, /"text"/);
  assert.match(errors[3].error.message, /null/);
  assert.equal(errors[4].id, null);
  // An id that can be read is echoed.
  assert.equal(errors[5].id, 11);
  s.send({ id: { nested: 1 }, method: "process/read", params: {} });
  const badId = await s.waitFor((m) => /request id/.test(m.error?.message ?? ""));
  assert.equal(badId.error.code, -32600);
  assert.equal(badId.id, null);
  assert.match(badId.error.message, /nested/);
  s.send({ id: 12, method: 7 });
  const badMethod = await s.response(12);
  assertError(badMethod, -32600, /method must be a string, got 7/);
});

Deno.test("-32601: unknown method names the method", async () => {
  await using s = await TestServer.start();
  assertError(await s.request("process/frobnicate", {}), -32601, /process\/frobnicate/);
  assertError(await s.request("", {}), -32601, /unknown method/);
});

Deno.test("-32602: missing and mistyped fields name the field and value", async () => {
  await using s = await TestServer.start();
  const base = { processId: "v", argv: ["true"], ...START };
  const cases: [Msg, RegExp][] = [
    [{ ...base, processId: undefined }, /processId must be a string, got nothing/],
    [{ ...base, processId: 17 }, /processId must be a string, got 17/],
    [{ ...base, processId: "" }, /processId must not be empty/],
    [{ ...base, argv: "true" }, /argv must be an array of strings, got "true"/],
    [{ ...base, argv: [] }, /argv must not be empty/],
    [{ ...base, argv: [""] }, /argv\[0\] must not be empty/],
    [{ ...base, argv: ["", "x"], tty: true }, /argv\[0\] must not be empty/],
    [{ ...base, argv: ["echo", 5] }, /argv\[1\] must be a string, got 5/],
    [{ ...base, cwd: undefined }, /cwd must be a string/],
    [{ ...base, cwd: "tmp" }, /cwd must be an absolute path, got "tmp"/],
    [{ ...base, cwd: "./x" }, /cwd must be an absolute path, got "\.\/x"/],
    [{ ...base, env: undefined }, /env must be an object of strings/],
    [{ ...base, env: { A: 1 } }, /env\.A must be a string, got 1/],
    [{ ...base, tty: "yes" }, /tty must be a boolean, got "yes"/],
    [{ ...base, arg0: 3 }, /arg0 must be a string or null, got 3/],
    [{ ...base, pipeStdin: "no" }, /pipeStdin must be a boolean, got "no"/],
  ];
  for (const [params, message] of cases) {
    assertError(await s.request("process/start", params), -32602, message);
  }
  assertError(await s.request("process/start", [1, 2]), -32602, /params must be an object/);
  assertError(
    await s.request("process/read", { processId: "v", waitMs: -1 }),
    -32602,
    /waitMs must be an integer .*got -1/,
  );
  assertError(
    await s.request("process/read", { processId: "v", afterSeq: 1.5 }),
    -32602,
    /afterSeq must be an integer .*got 1.5/,
  );
  assertError(
    await s.request("process/read", { processId: "v", maxBytes: "10" }),
    -32602,
    /maxBytes must be an integer .*got "10"/,
  );
  assertError(await s.request("process/terminate", {}), -32602, /processId must be a string/);
});

Deno.test("-32602: bad base64 in process/write", async () => {
  await using s = await TestServer.start();
  assert.ok((await s.start("cat", ["cat"], { pipeStdin: true })).result);
  for (const bad of ["@@@@", "aGk", "aGk=x", "a b=", "aGk=\n", "aG=k"]) {
    const res = await s.request("process/write", { processId: "cat", chunk: bad });
    assertError(res, -32602, /^chunk: invalid base64/);
    assert.ok(res.error.message.includes(JSON.stringify(bad)), res.error.message);
  }
  assertError(
    await s.request("process/write", { processId: "cat", chunk: 5 }),
    -32602,
    /chunk must be a string, got 5/,
  );
  await s.request("process/closeStdin", { processId: "cat" });
  await s.waitExited("cat");
  assert.equal(s.outputText("cat"), "", "a rejected chunk reached the process");
});

Deno.test("-32603: spawn failures carry data.errno ENOENT (pipe and tty)", async () => {
  await using s = await TestServer.start();
  for (const tty of [false, true]) {
    const missing = await s.start(`missing-${tty}`, ["no-such-program-xyz", "a"], { tty });
    assertError(missing, -32603, /no-such-program-xyz/);
    assert.equal(missing.error.data?.errno, "ENOENT");
    const absent = await s.start(`abs-${tty}`, ["/nonexistent/bin/prog"], { tty });
    assertError(absent, -32603, /\/nonexistent\/bin\/prog/);
    assert.equal(absent.error.data?.errno, "ENOENT");
    const cwd = await s.start(`cwd-${tty}`, ["true"], { tty, cwd: "/nonexistent-dir-xyz" });
    assertError(cwd, -32603, /\/nonexistent-dir-xyz/);
    assert.equal(cwd.error.data?.errno, "ENOENT");
  }
  // A failed start frees its id.
  const ok = await s.start("missing-false", ["true"]);
  assert.deepEqual(ok.result, { processId: "missing-false" });
  await s.waitExited("missing-false");
});

Deno.test("-32603: a cwd that is a file, and a program that is not executable", async () => {
  await using s = await TestServer.start();
  const notDir = await s.start("nd", ["true"], { cwd: "/etc/passwd" });
  assertError(notDir, -32603, /\/etc\/passwd/);
  assert.equal(notDir.error.data?.errno, "ENOTDIR");
  const notExec = await s.start("ne", ["/etc/passwd"]);
  assertError(notExec, -32603, /\/etc\/passwd/);
  assert.equal(notExec.error.data?.errno, "EACCES");
});

Deno.test("-32600: racing starts with one id in one write: exactly one succeeds", async () => {
  await using s = await TestServer.start();
  const ids: number[] = [];
  let batch = "";
  for (let i = 0; i < 10; i++) {
    const id = s.newId();
    ids.push(id);
    const params = { processId: "race", argv: ["sleep", "300"], ...START, tty: i % 2 === 1 };
    batch += JSON.stringify({ id, method: "process/start", params }) + "\n";
  }
  s.writeRaw(batch);
  const answers = await Promise.all(ids.map((id) => s.response(id)));
  assert.equal(answers.filter((a) => a.result).length, 1, JSON.stringify(answers));
  for (const a of answers.filter((a) => a.error)) {
    assertError(a, -32600, /duplicate process id race/);
  }
  assert.deepEqual((await s.request("process/terminate", { processId: "race" })).result, {
    running: true,
  });
  await s.waitExited("race");
  assert.equal(
    s.messages.filter((m) => m.method === "process/exited").length,
    1,
    "a losing start left a process behind",
  );
});
