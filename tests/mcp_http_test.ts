/**
 * `exec-server mcp --listen http://…`: who gets in (token, Host, Origin),
 * sessions, and that every client of the endpoint sees the same commands;
 * a cancellation sent as its own POST stops the wait it names.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "./harness.ts";
import { callTool, initialize, McpHttp, mcpRuntimes, startMcpHttp, textOf } from "./mcp_fixture.ts";

/** POST the initialize request with exactly these headers. */
function rawPost(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
    }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => body += d);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(INIT));
  });
}

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  },
};

Deno.test("mcp http: a token is required, foreign Hosts and browser origins are refused", async () => {
  const server = await startMcpHttp();
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const anonymous = await new McpHttp(server.url).post(INIT);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get("www-authenticate"), "Bearer");
    await anonymous.body?.cancel();
    const wrong = await new McpHttp(server.url, "not-the-token").post(INIT);
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const client = new McpHttp(server.url, server.token);
    // fetch cannot set Host; node:http can, as a DNS-rebinding page's browser would send it.
    const rebound = await rawPost(server.url, {
      host: "evil.example:80",
      authorization: `Bearer ${server.token}`,
    });
    assert.equal(rebound.status, 403);
    assert.match(rebound.body, /Host "evil\.example:80"/);
    const browser = await client.post(INIT, { origin: "https://evil.example" });
    assert.equal(browser.status, 403);
    await browser.body?.cancel();
    const elsewhere = await fetch(server.url.replace(/\/mcp$/, "/other"), {
      headers: { authorization: `Bearer ${server.token}` },
    });
    assert.equal(elsewhere.status, 404);
    await elsewhere.body?.cancel();
    const unknownSession = await client.post(
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { "mcp-session-id": "no-such-session" },
    );
    assert.equal(unknownSession.status, 404);
    await unknownSession.body?.cancel();
    // With the token, the handshake and a call work.
    const init = await initialize(client);
    assert.equal(init.serverInfo.name, "exec-server");
    assert.ok(client.sessionId, "no Mcp-Session-Id");
    const r = await callTool(client, "exec_command", { argv: ["echo", "over-http"] });
    assert.equal(r.structuredContent.output, "over-http\n");
    await client.close();
  } finally {
    await server.stop();
  }
});

Deno.test("mcp http: a token file is used, and clients share the commands", async () => {
  const dir = await mkdtemp(join(tmpdir(), "mcp-http-"));
  const tokenFile = join(dir, "token");
  await writeFile(tokenFile, "file-token-0123456789\n", { mode: 0o600 });
  const server = await startMcpHttp(["--token-file", tokenFile]);
  try {
    const a = new McpHttp(server.url, "file-token-0123456789");
    const b = new McpHttp(server.url, "file-token-0123456789");
    await initialize(a);
    await initialize(b);
    assert.notEqual(a.sessionId, b.sessionId);
    const started = await callTool(a, "exec_command", {
      cmd: "echo from-a; sleep 0.5; echo done-a",
      yield_time_ms: 0,
    });
    const id = started.structuredContent.session_id;
    const listed = await callTool(b, "list_sessions");
    assert.ok(
      listed.structuredContent.sessions.some((s: { session_id: number }) => s.session_id === id),
    );
    const out = started.structuredContent.output + await readToExit(b, id);
    assert.equal(out, "from-a\ndone-a\n");
    await a.close();
    await b.close();
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

/**
 * Start a command held until `release()` (so it cannot end early), in a
 * call that is in flight once this returns; `hangUp()` drops the call's
 * connection.
 */
async function heldCall(client: McpHttp, first: string, second: string) {
  const go = `/tmp/mcp-http-held-${crypto.randomUUID()}`;
  const requestId = client.nextId;
  const aborter = new AbortController();
  const pending = client.request("tools/call", {
    name: "exec_command",
    arguments: {
      cmd: `echo ${first}; while [ ! -e ${go} ]; do sleep 0.05; done; echo ${second}; rm ${go}`,
      yield_time_ms: 30000,
    },
  }, aborter.signal).catch((err) => err);
  // In flight once listed (the POSTs are separate and could overtake each other).
  let session = 0;
  await eventually(async () => {
    const l = await callTool(client, "list_sessions");
    session = l.structuredContent.sessions[0]?.session_id ?? 0;
    return session !== 0;
  });
  return {
    requestId,
    session,
    hangUp: async () => {
      aborter.abort();
      await pending;
    },
    release: () => Deno.writeTextFile(go, ""),
  };
}

/** Poll `session` until it exits; all the output read. */
async function readToExit(client: McpHttp, session: number): Promise<string> {
  let out = "";
  for (;;) {
    const r = await callTool(client, "write_stdin", { session_id: session, yield_time_ms: 2000 });
    out += r.structuredContent.output;
    if (r.structuredContent.exit_code !== null) return out;
  }
}

Deno.test("mcp http: a cancellation POSTed on the session ends the wait, not the command", async () => {
  const server = await startMcpHttp();
  try {
    const client = new McpHttp(server.url, server.token);
    await initialize(client);
    const call = await heldCall(client, "first", "second");
    await client.notify("notifications/cancelled", {
      requestId: call.requestId,
      reason: "timeout",
    });
    await call.hangUp();
    await call.release();
    assert.equal(await readToExit(client, call.session), "first\nsecond\n");
    assert.match(textOf(await callTool(client, "list_sessions")), /No sessions/);
    await client.close();
  } finally {
    await server.stop();
  }
});

for (const rt of mcpRuntimes()) {
  Deno.test({
    name: `mcp http (${rt.name}): a client that hangs up on a call leaves its output to the next`,
    ignore: rt.ignore,
    fn: async () => {
      const server = await startMcpHttp([], rt.command());
      try {
        const client = new McpHttp(server.url, server.token);
        await initialize(client);
        const call = await heldCall(client, "a", "b");
        // No cancellation: the connection just closes, as a killed client's would.
        await call.hangUp();
        await call.release();
        assert.equal(await readToExit(client, call.session), "a\nb\n");
        await client.close();
      } finally {
        await server.stop();
      }
    },
  });
}
