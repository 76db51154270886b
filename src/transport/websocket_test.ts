import assert from "node:assert/strict";
import { BinaryFrame, type IncomingFrame } from "../rpc/connection.ts";
import { payloadPool } from "../rpc/payload_pool.ts";
import { sendCopiesBytes } from "../runtime/websocket_types.ts";
import { WebSocketConnection, type WebSocketLike } from "./websocket.ts";

type Listener = (event: { data?: unknown }) => void;

/** A scriptable stand-in for a WebSocket: the test decides what arrives and what drains. */
class FakeSocket implements WebSocketLike {
  readyState = 1;
  bufferedAmount = 0;
  binaryType = "blob";
  sent: (string | Uint8Array)[] = [];
  closedWith: [number | undefined, string | undefined] | undefined;
  #listeners = new Map<string, Listener[]>();

  send(data: string | Uint8Array): void {
    this.sent.push(data);
    this.bufferedAmount += data.length;
  }

  close(code?: number, reason?: string): void {
    this.closedWith = [code, reason];
    this.readyState = 2;
    setTimeout(() => this.remoteClose(), 1);
  }

  addEventListener(type: string, listener: Listener): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }

  emit(type: string, data?: unknown): void {
    for (const l of this.#listeners.get(type) ?? []) l({ data });
  }

  remoteClose(): void {
    this.readyState = 3;
    this.emit("close");
  }
}

async function collect(conn: WebSocketConnection): Promise<IncomingFrame[]> {
  const out: IncomingFrame[] = [];
  for await (const f of conn.frames()) out.push(f);
  return out;
}

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

Deno.test("WebSocketConnection: text and binary frames, in order, until close", async () => {
  const socket = new FakeSocket();
  const conn = new WebSocketConnection(socket, { maxMessageBytes: 1024 });
  assert.equal(socket.binaryType, "arraybuffer");
  const frames = collect(conn);
  const utf8 = new TextEncoder().encode('{"b":"é"}');
  socket.emit("message", '{"a":1}');
  socket.emit("message", utf8.buffer);
  socket.emit("message", new Uint8Array([0, ...utf8, 0]).subarray(1, utf8.length + 1));
  socket.emit("message", new Blob(['{"blob":true}']));
  socket.emit("message", "after the blob");
  socket.emit("message", new Uint8Array([0x7b, 0xff]));
  socket.remoteClose();
  socket.emit("message", "after close is dropped");
  assert.deepEqual(await frames, [
    { kind: "text", text: '{"a":1}' },
    { kind: "text", text: '{"b":"é"}' },
    { kind: "text", text: '{"b":"é"}' },
    { kind: "text", text: '{"blob":true}' },
    { kind: "text", text: "after the blob" },
    { kind: "badUtf8", bytes: 2 },
  ]);
});

Deno.test("WebSocketConnection: frames over the limit are measured in UTF-8 bytes", async () => {
  const socket = new FakeSocket();
  const conn = new WebSocketConnection(socket, { maxMessageBytes: 1024 });
  const frames = collect(conn);
  socket.emit("message", "é".repeat(600)); // 600 UTF-16 units, 1200 bytes
  socket.emit("message", "😀".repeat(256)); // 512 units, exactly 1024 bytes
  socket.emit("message", new Uint8Array(1025));
  socket.remoteClose();
  const got = await frames;
  assert.deepEqual(got[0], { kind: "tooLarge", bytes: 1200, limit: 1024 });
  assert.equal(got[1].kind, "text");
  assert.deepEqual(got[2], { kind: "tooLarge", bytes: 1025, limit: 1024 });
});

Deno.test("WebSocketConnection: frames() can be iterated once only", async () => {
  const socket = new FakeSocket();
  const conn = new WebSocketConnection(socket);
  const first = collect(conn);
  await assert.rejects(collect(conn), /only once/);
  socket.remoteClose();
  assert.deepEqual(await first, []);
});

Deno.test("WebSocketConnection: send reports congestion and onDrain fires below low water", async () => {
  const socket = new FakeSocket();
  const conn = new WebSocketConnection(socket, {
    highWaterBytes: 100,
    lowWaterBytes: 25,
    drainPollMs: 1,
  });
  let drains = 0;
  conn.onDrain(() => drains++);
  assert.equal(conn.send("x".repeat(60)), true);
  assert.equal(conn.send("x".repeat(60)), false);
  assert.equal(conn.send("x"), false, "stays congested until drained");
  assert.equal(socket.sent.length, 3, "frames are still sent while congested");
  socket.bufferedAmount = 30;
  await tick(20);
  assert.equal(drains, 0, "not below the low-water mark yet");
  socket.bufferedAmount = 25;
  await tick(20);
  assert.equal(drains, 1);
  await tick(20);
  assert.equal(drains, 1, "polling stops once drained");
  assert.equal(conn.send("y"), true);
  socket.remoteClose();
});

Deno.test("WebSocketConnection: frames sent while connecting go out on open", () => {
  const socket = new FakeSocket();
  socket.readyState = 0;
  const conn = new WebSocketConnection(socket, { highWaterBytes: 1000 });
  assert.equal(conn.send("one"), true);
  assert.equal(conn.send("two"), true);
  assert.equal(socket.sent.length, 0);
  assert.equal(conn.bufferedBytes, 6);
  socket.readyState = 1;
  socket.emit("open");
  assert.deepEqual(socket.sent, ["one", "two"]);
  assert.equal(conn.send("three"), true);
  assert.deepEqual(socket.sent, ["one", "two", "three"]);
  socket.remoteClose();
});

Deno.test("WebSocketConnection: close() flushes, closes with 1000, waits for the close", async () => {
  const socket = new FakeSocket();
  const conn = new WebSocketConnection(socket, { drainPollMs: 1 });
  const frames = collect(conn);
  conn.send("last words");
  const closing = conn.close();
  await tick(10);
  assert.equal(socket.closedWith, undefined, "waits while frames are buffered");
  socket.bufferedAmount = 0;
  await closing;
  assert.deepEqual(socket.closedWith, [1000, "closing"]);
  assert.equal(socket.readyState, 3);
  assert.deepEqual(await frames, []);
  // Sends after the close are dropped without touching the socket.
  assert.equal(conn.send("too late"), true);
  assert.deepEqual(socket.sent, ["last words"]);
  await conn.close();
});

Deno.test("WebSocketConnection: close() gives up after closeTimeoutMs", async () => {
  const socket = new FakeSocket();
  socket.close = (code, reason) => {
    socket.closedWith = [code, reason];
  };
  const conn = new WebSocketConnection(socket, { drainPollMs: 1, closeTimeoutMs: 30 });
  conn.send("never drains");
  await conn.close();
  assert.deepEqual(socket.closedWith, [1000, "closing"]);
  socket.remoteClose();
});

Deno.test("WebSocketConnection: an error event ends the frames", async () => {
  const socket = new FakeSocket();
  const conn = new WebSocketConnection(socket);
  const frames = collect(conn);
  socket.emit("message", "before");
  socket.emit("error");
  assert.deepEqual(await frames, [{ kind: "text", text: "before" }]);
});

Deno.test("WebSocketConnection: binary frames go as one binary message and come back with their payload", async () => {
  const socket = new FakeSocket();
  const conn = new WebSocketConnection(socket);
  assert.equal(conn.binaryFrames, true);
  const payload = new Uint8Array([0x0a, 0x23, 0, 255]);
  conn.send(new BinaryFrame('{"id":1,"result":{}}', "dataBase64", payload));
  const sent = socket.sent[0];
  assert.ok(sent instanceof Uint8Array, "a binary message");
  const head = '#4 dataBase64 {"id":1,"result":{}}\n';
  assert.equal(new TextDecoder().decode(sent.subarray(0, head.length)), head);
  assert.deepEqual(sent.subarray(head.length), payload);
  // The same message received; a binary message that is no frame stays JSON.
  socket.emit("message", sent.slice().buffer);
  socket.emit("message", new TextEncoder().encode('{"id":2}').buffer);
  socket.remoteClose();
  assert.deepEqual(await collect(conn), [
    {
      kind: "text",
      text: '{"id":1,"result":{}}',
      payload: { field: "dataBase64", bytes: payload },
    },
    { kind: "text", text: '{"id":2}' },
  ]);
});

Deno.test("WebSocketConnection: with adoptMessages, a received payload is freed once given back", async () => {
  for (const adoptMessages of [true, false]) {
    const socket = new FakeSocket();
    const conn = new WebSocketConnection(socket, { adoptMessages });
    const message = new TextEncoder().encode('#3 dataBase64 {"id":1}\nabc').buffer;
    socket.emit("message", message);
    socket.remoteClose();
    const [frame] = await collect(conn);
    assert.ok(frame.kind === "text" && frame.payload);
    assert.equal(payloadPool.give(frame.payload.bytes), adoptMessages);
    assert.equal(message.byteLength === 0, adoptMessages);
  }
});

Deno.test("WebSocketConnection: binary frames sent back to back over a real socket arrive intact", async () => {
  // Deno's sockets copy what they send, so the connection encodes every
  // binary frame into one reused buffer: each must still arrive as sent.
  const received: Uint8Array[] = [];
  let reused = false;
  const done = Promise.withResolvers<void>();
  const ac = new AbortController();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", signal: ac.signal, onListen() {} },
    (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.onopen = () => {
        reused = sendCopiesBytes(socket);
        const conn = new WebSocketConnection(socket);
        for (let i = 1; i <= 3; i++) {
          conn.send(new BinaryFrame(`{"id":${i}}`, "dataBase64", new Uint8Array(300_000).fill(i)));
        }
      };
      return response;
    },
  );
  const client = new WebSocket(`ws://127.0.0.1:${server.addr.port}`);
  client.binaryType = "arraybuffer";
  client.onmessage = (e) => {
    received.push(new Uint8Array(e.data as ArrayBuffer));
    if (received.length === 3) done.resolve();
  };
  try {
    await done.promise;
  } finally {
    client.close();
    ac.abort();
    await server.finished;
  }
  assert.ok(reused, "Deno's own socket takes the reused buffer");
  received.forEach((message, i) => {
    const head = `#300000 dataBase64 {"id":${i + 1}}\n`;
    assert.equal(new TextDecoder().decode(message.subarray(0, head.length)), head);
    assert.ok(message.subarray(head.length).every((b) => b === i + 1), `message ${i + 1}`);
  });
});
