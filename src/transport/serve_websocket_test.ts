import assert from "node:assert/strict";
import { connect } from "node:net";
import { ListenError } from "../runtime/websocket_server.ts";
import { ExecServer } from "../server/server.ts";
import { formatWsUrl, serveWebSocket } from "./serve_websocket.ts";
import { WebSocketConfigError } from "./websocket_auth.ts";

// deno-lint-ignore no-explicit-any
type Msg = Record<string, any>;

/** Open a websocket with an Authorization header; resolves with the socket and its messages. */
function open(url: string, token: string): Promise<{ socket: WebSocket; messages: Msg[] }> {
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
  const messages: Msg[] = [];
  socket.onmessage = (ev) => messages.push(JSON.parse(String(ev.data)));
  return new Promise((resolve, reject) => {
    socket.onopen = () => resolve({ socket, messages });
    socket.onerror = () => reject(new Error("websocket did not open"));
  });
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("serveWebSocket: stopAccepting() keeps sessions, close() ends them", async () => {
  const server = new ExecServer();
  const ws = await serveWebSocket(server, { token: "lib-token" });
  assert.equal(ws.url, `ws://127.0.0.1:${ws.port}`);
  assert.equal(ws.token, "lib-token");
  assert.equal(ws.tokenGenerated, false);

  const { socket, messages } = await open(ws.url, "lib-token");
  const closed = new Promise((r) => socket.addEventListener("close", r));
  socket.send(JSON.stringify({ id: 1, method: "initialize", params: { clientName: "lib" } }));
  socket.send(JSON.stringify({ method: "initialized" }));
  socket.send(JSON.stringify({
    id: 2,
    method: "process/start",
    params: { processId: "s", argv: ["sleep", "30"], cwd: "/", env: {}, tty: false },
  }));
  await until(() => messages.some((m) => m.id === 2), "process/start");
  assert.deepEqual(messages.find((m) => m.id === 2)?.result, { processId: "s" });
  assert.equal(ws.connectionCount, 1);
  assert.equal(server.connectionCount, 1);
  const http = ws.url.replace(/^ws:/, "http:");
  assert.equal(await (await fetch(`${http}/readyz`)).text(), "ok");

  ws.stopAccepting();
  const draining = await fetch(`${http}/readyz`);
  assert.equal(draining.status, 503);
  assert.equal(await draining.text(), "stopping");
  await assert.rejects(open(ws.url, "lib-token"));
  socket.send(JSON.stringify({ id: 3, method: "process/read", params: { processId: "s" } }));
  await until(() => messages.some((m) => m.id === 3), "process/read");
  assert.equal(messages.find((m) => m.id === 3)?.result.exited, false);
  assert.equal(ws.connectionCount, 1);

  await ws.close();
  await closed;
  assert.equal(ws.connectionCount, 0);
  assert.equal(server.connectionCount, 0);
  await assert.rejects(open(ws.url, "lib-token"));
});

Deno.test("serveWebSocket: a generated token on loopback only", async () => {
  const server = new ExecServer();
  const ws = await serveWebSocket(server, { hostname: "::1" });
  try {
    assert.equal(ws.tokenGenerated, true);
    assert.match(ws.token ?? "", /^[0-9a-f]{64}$/);
    assert.match(ws.url, /^ws:\/\/\[::1\]:\d+$/);
  } finally {
    await ws.close();
  }
  await assert.rejects(
    serveWebSocket(server, { hostname: "0.0.0.0" }),
    (err) => err instanceof WebSocketConfigError && /not a loopback address/.test(err.message),
  );
  await assert.rejects(
    serveWebSocket(server, { token: "t", noAuth: true }),
    WebSocketConfigError,
  );
  await assert.rejects(serveWebSocket(server, { maxConnections: 0 }), /maxConnections/);
  await assert.rejects(serveWebSocket(server, { allowOrigins: ["*"] }), /not an origin/);
});

Deno.test("serveWebSocket: a port in use is a ListenError", async () => {
  const server = new ExecServer();
  const first = await serveWebSocket(server, { token: "t" });
  try {
    await assert.rejects(
      serveWebSocket(server, { token: "t", port: first.port }),
      (err) => err instanceof ListenError && err.message.includes(String(first.port)),
    );
  } finally {
    await first.close();
  }
});

Deno.test("serveWebSocket: a peer that never answers pings is disconnected", async () => {
  const server = new ExecServer();
  const ws = await serveWebSocket(server, { noAuth: true, heartbeatMs: 300 });
  // A raw client completes the handshake, then ignores everything, pings included.
  const sock = connect({ host: "127.0.0.1", port: ws.port });
  const closed = new Promise((r) => sock.on("close", r));
  sock.on("data", () => {});
  sock.write(
    "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  await until(() => ws.connectionCount === 1, "the connection");
  await closed;
  await until(() => ws.connectionCount === 0, "the session to end");
  await ws.close();
});

Deno.test("formatWsUrl brackets IPv6 addresses", () => {
  assert.equal(formatWsUrl("127.0.0.1", 80), "ws://127.0.0.1:80");
  assert.equal(formatWsUrl("::1", 8080), "ws://[::1]:8080");
  assert.equal(formatWsUrl("fe80::1%eth0", 1), "ws://[fe80::1%25eth0]:1");
});
