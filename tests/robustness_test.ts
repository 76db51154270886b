/**
 * Bad input never takes the connection down: a malformed line, an oversized
 * line, bad UTF-8, an unknown method and a non-request each get their error
 * while a running process on the same connection keeps streaming, and the
 * server still answers normal requests afterwards.
 */
import assert from "node:assert/strict";
import { b64, type Msg, TestServer } from "./harness.ts";

const TICKER = ["sh", "-c", "while :; do echo tick; sleep 0.05; done"];

/** Wait until `id` has produced `count` more output notifications after index `from`. */
function ticksAfter(s: TestServer, id: string, from: number, count: number): Promise<Msg> {
  let seen = 0;
  return s.waitFor(
    (m) =>
      m.method === "process/output" && m.params.processId === id &&
      s.messages.indexOf(m) > from && ++seen >= count,
    10_000,
    `${count} outputs of ${id} after message ${from}`,
  );
}

Deno.test("bad messages get their errors while a process keeps streaming", async () => {
  await using s = await TestServer.start(["--max-message-bytes", "4096"]);
  assert.deepEqual((await s.start("ticker", TICKER)).result, { processId: "ticker" });
  await ticksAfter(s, "ticker", -1, 1);

  const errorsBefore = s.messages.filter((m) => m.error).length;
  s.writeRaw('{"id": 1, "method": \n');
  s.writeRaw(`{"id":2,"method":"process/read","params":{"pad":"${"x".repeat(8000)}"}}\n`);
  s.writeRaw(new Uint8Array([0xc3, 0x28, 0x0a]));
  s.send({ id: 3, method: "no/such/method", params: {} });
  s.writeRaw("[]\n");
  const errors = await s.waitFor(
    () => s.messages.filter((m) => m.error).length >= errorsBefore + 5,
    10_000,
    "five errors",
  ).then(() => s.messages.filter((m) => m.error).slice(errorsBefore));
  const expected = [
    [null, -32700], // malformed JSON
    [null, -32600], // too large
    [null, -32700], // bad UTF-8
    [3, -32601], // unknown method
    [null, -32600], // not a request
  ];
  assert.deepEqual(errors.map((m) => [m.id, m.error.code]), expected);
  assert.match(errors[1].error.message, /too large/);
  assert.match(errors[3].error.message, /no\/such\/method/);

  // The ticker still streams after the last error...
  const lastError = s.messages.indexOf(errors[4]);
  await ticksAfter(s, "ticker", lastError, 3);
  // ...and normal requests are still answered.
  const read = await s.request("process/read", { processId: "ticker" });
  assert.ok(read.result.chunks.length > 0);
  assert.equal(read.result.exited, false);
  const write = await s.request("process/write", { processId: "ticker", chunk: b64("x") });
  assert.equal(write.error.code, -32600);
  const term = await s.request("process/terminate", { processId: "ticker" });
  assert.deepEqual(term.result, { running: true });
  await s.waitExited("ticker");
  assert.deepEqual(s.badLines, []);
  assert.equal((await s.close()).code, 0);
});

Deno.test("an oversized line split across many writes is discarded as a whole", async () => {
  await using s = await TestServer.start(["--max-message-bytes", "4096"]);
  await s.start("ticker", TICKER);
  // 64 KiB arriving in pieces, then a newline: one error, no garbage parsed
  // out of its tail.
  const piece = '"}{"id":99,"method":"process/terminate","params":{"processId":"ticker"}}';
  for (let i = 0; i < 64; i++) s.writeRaw(piece.padEnd(1024, " "));
  s.writeRaw("\n");
  const err = await s.waitFor((m) => m.error?.code === -32600 && m.id === null);
  assert.match(err.error.message, /65536 bytes exceeds the limit of 4096/);
  await ticksAfter(s, "ticker", s.messages.indexOf(err), 2);
  assert.equal(s.indexOf((m) => m.id === 99), -1, "a part of the oversized line was run");
  const read = await s.request("process/read", { processId: "ticker" });
  assert.equal(read.result.exited, false);
  await s.request("process/terminate", { processId: "ticker" });
  await s.waitExited("ticker");
});

Deno.test("a final request without a trailing newline is still answered", async () => {
  const s = await TestServer.start();
  try {
    s.writeRaw('{"id":"last","method":"process/read","params":{"processId":"x"}}');
    s.child.stdin!.end();
    const res = await s.response("last");
    assert.equal(res.error.code, -32600);
    assert.equal((await s.exited).code, 0);
  } finally {
    s.kill();
  }
});

Deno.test("a flood of bad lines is answered line by line while output streams", async () => {
  await using s = await TestServer.start();
  await s.start("ticker", TICKER);
  const lines: string[] = [];
  for (let i = 0; i < 200; i++) {
    lines.push(i % 2 === 0 ? `garbage ${i}` : JSON.stringify({ id: `r${i}`, method: "nope" }));
  }
  s.writeRaw(lines.join("\n") + "\n\n\n");
  await s.waitFor(() => s.messages.filter((m) => m.error).length >= 200, 10_000, "200 errors");
  assert.equal(s.messages.filter((m) => m.error?.code === -32700).length, 100);
  assert.equal(s.messages.filter((m) => m.error?.code === -32601).length, 100);
  await ticksAfter(s, "ticker", s.messages.length - 1, 2);
  await s.request("process/terminate", { processId: "ticker" });
  await s.waitExited("ticker");
});
