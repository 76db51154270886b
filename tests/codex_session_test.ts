/**
 * Codex-dialect sessions on a websocket server: a dropped connection's
 * processes live on for the grace period and a resume gets every byte; after
 * it the whole tree is gone; wrong ids, a second attach and a connection
 * without the token are refused; and v0 clients on the same server are
 * answered in v0's shapes meanwhile.
 */
import assert from "node:assert/strict";
import { CodexWs, startTokenServer } from "./codex_cli_fixture.ts";
import { eventually, type Msg, pidsByArgv0, unb64 } from "./harness.ts";

const TOKEN = "codex-session-test-token-0123456789";

/** Run `fn` with a fresh token server whose grace period is `graceMs`. */
async function withServer(graceMs: number, fn: (url: string) => Promise<void>): Promise<void> {
  const [s, stop] = await startTokenServer(TOKEN, ["--session-grace-ms", String(graceMs)]);
  try {
    await fn(s.url);
  } finally {
    await stop();
  }
}

function start(c: CodexWs, processId: string, script: string, argv0 = "sh"): Promise<Msg> {
  return c.request("process/start", {
    processId,
    argv: ["/bin/bash", "-c", `exec -a ${argv0} /bin/sh -c '${script}'`],
    cwd: "file:///tmp",
    env: {},
    tty: false,
    sandbox: null,
  });
}

/** Read from `afterSeq` until the process is closed; the text and the last result. */
async function readAll(c: CodexWs, id: string, afterSeq: number): Promise<[string, Msg]> {
  let text = "";
  let seq = afterSeq;
  while (true) {
    const r =
      (await c.request("process/read", { processId: id, afterSeq: seq, waitMs: 2000 })).result;
    for (const chunk of r.chunks) text += unb64(chunk.chunk);
    seq = r.nextSeq - 1;
    if (r.closed) return [text, r];
  }
}

Deno.test("codex session: a resume within the grace period gets every byte, in order", async () => {
  await withServer(20_000, async (url) => {
    const a = await CodexWs.open(url, TOKEN);
    const init = (await a.initialize(null)).result;
    await start(a, "counter", "for i in $(seq 1 40); do echo line-$i; sleep 0.02; done; exit 4");
    const first = await a.waitFor((m) => m.method === "process/output");
    a.drop();
    await new Promise((r) => setTimeout(r, 300));
    const b = await CodexWs.open(url, TOKEN);
    const resumed = await b.initialize(init.sessionId);
    assert.equal(resumed.result.sessionId, init.sessionId);
    const [rest, last] = await readAll(b, "counter", first.params.seq);
    const all = unb64(first.params.chunk) + rest;
    const expected = Array.from({ length: 40 }, (_, i) => `line-${i + 1}\n`).join("");
    assert.equal(all, expected);
    assert.equal(last.exitCode, 4);
    assert.equal(last.exited, true);
    b.drop();
  });
});

Deno.test("codex session: after the grace period the tree is gone and the id unknown", async () => {
  await withServer(400, async (url) => {
    const a = await CodexWs.open(url, TOKEN);
    const init = (await a.initialize(null)).result;
    const marker = `codex-grace-${Date.now()}`;
    await start(a, "long", "sleep 300 & sleep 300", marker);
    await eventually(async () => (await pidsByArgv0(marker)).length > 0, 5000, "the process");
    a.drop();
    await new Promise((r) => setTimeout(r, 150));
    assert.ok((await pidsByArgv0(marker)).length > 0, "killed before the grace period ended");
    await eventually(async () => (await pidsByArgv0(marker)).length === 0, 5000, "no orphans");
    const b = await CodexWs.open(url, TOKEN);
    const refused = await b.initialize(init.sessionId);
    assert.equal(refused.error?.code, -32600);
    assert.match(refused.error.message, /unknown session id/);
    b.drop();
  });
});

Deno.test("codex session: wrong ids, a second attach and a missing token are refused", async () => {
  await withServer(20_000, async (url) => {
    const a = await CodexWs.open(url, TOKEN);
    const init = (await a.initialize(null)).result;
    const wrong = await (await CodexWs.open(url, TOKEN)).initialize("not-a-session");
    assert.equal(wrong.error?.code, -32600);
    assert.match(wrong.error.message, /unknown session id not-a-session/);
    const second = await (await CodexWs.open(url, TOKEN)).initialize(init.sessionId);
    assert.equal(second.error?.code, -32600);
    assert.match(second.error.message, /attached to another connection/);
    await assert.rejects(CodexWs.open(url, undefined), /HTTP 401/);
    await assert.rejects(CodexWs.open(url, "wrong-token"), /HTTP 401/);
    // The attached session is unharmed.
    const ok = await start(a, "after", "echo still-here");
    assert.equal(ok.result.processId, "after");
    a.drop();
  });
});

Deno.test("one websocket server: a v0 client and a Codex client, each in its own shapes", async () => {
  await withServer(20_000, async (url) => {
    const v0 = await CodexWs.open(url, TOKEN);
    const init = await v0.request("initialize", { clientName: "plain-v0" });
    v0.notify("initialized", {});
    assert.equal(init.result.protocolVersion, "exec-server.v0");
    assert.equal(init.result.sessionId, undefined);
    const codex = await CodexWs.open(url, TOKEN);
    assert.ok((await codex.initialize(null)).result.sessionId);
    // The same process on both, at once.
    const [v0Start] = await Promise.all([
      v0.request("process/start", {
        processId: "p",
        argv: ["echo", "hi"],
        cwd: "/tmp",
        env: { PATH: "/usr/bin:/bin" },
        tty: false,
      }),
      start(codex, "p", "echo hi"),
    ]);
    assert.deepEqual(v0Start.result, { processId: "p" });
    const v0Exit = await v0.waitFor((m) => m.method === "process/exited");
    assert.equal(v0Exit.params.seq, undefined, "a v0 exit carries no seq");
    assert.equal(typeof v0Exit.params.durationMs, "number");
    const codexExit = await codex.waitFor((m) => m.method === "process/exited");
    assert.equal(typeof codexExit.params.seq, "number");
    await codex.waitFor((m) => m.method === "process/closed");
    const v0Read = (await v0.request("process/read", { processId: "p" })).result;
    assert.equal(v0Read.closed, undefined, "a v0 read has no closed");
    assert.ok(!v0.messages.some((m) => m.method === "process/closed"), "v0 got process/closed");
    const v0Write = await v0.request("process/write", { processId: "nope", chunk: "" });
    assert.equal(v0Write.error?.code, -32600, "v0 keeps its error for an unknown process");
    v0.drop();
    codex.drop();
  });
});
