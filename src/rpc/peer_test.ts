import assert from "node:assert/strict";
import { BinaryFrame, frameText } from "./connection.ts";
import { Base64Part } from "../protocol/base64.ts";
import { payloadPool } from "./payload_pool.ts";
import { ErrorCode, RpcError } from "../protocol/errors.ts";
import {
  PeerClosedError,
  type PeerOptions,
  RemoteError,
  ResultWithEffect,
  RpcPeer,
} from "./peer.ts";

// deno-lint-ignore no-explicit-any
type Sent = Record<string, any>;

function makePeer(handlers: Partial<PeerOptions> = {}): {
  peer: RpcPeer;
  sent: Sent[];
  problems: string[];
} {
  const sent: Sent[] = [];
  const problems: string[] = [];
  const peer = new RpcPeer({
    send: (frame) => sent.push(JSON.parse(frameText(frame))),
    onProblem: (message) => problems.push(message),
    ...handlers,
  });
  return { peer, sent, problems };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("RpcPeer: requests get increasing ids and no jsonrpc member", async () => {
  const { peer, sent } = makePeer();
  const calls = [peer.request("a", { x: 1 }), peer.request("b")];
  assert.deepEqual(sent, [
    { id: 1, method: "a", params: { x: 1 } },
    { id: 2, method: "b" },
  ]);
  assert.equal(peer.pendingCount, 2);
  peer.close("test over");
  for (const call of calls) await assert.rejects(call, PeerClosedError);
});

Deno.test("RpcPeer: responses are matched by id in any order", async () => {
  const { peer } = makePeer();
  const first = peer.request("first");
  const second = peer.request("second");
  peer.receive('{"id":2,"result":"two"}');
  peer.receive('{"id":1,"result":{"one":1},"jsonrpc":"2.0"}');
  assert.deepEqual(await Promise.all([first, second]), [{ one: 1 }, "two"]);
  assert.equal(peer.pendingCount, 0);
});

Deno.test("RpcPeer: an error response rejects with RemoteError carrying code and data", async () => {
  const { peer } = makePeer();
  const call = peer.request("fs/readFile", { path: "/x" });
  peer.receiveValue({
    id: 1,
    error: { code: -32603, message: "no such file /x", data: { errno: "ENOENT" } },
  });
  const err = await call.then(() => assert.fail("resolved"), (e) => e);
  assert.ok(err instanceof RemoteError);
  assert.equal(err.code, -32603);
  assert.deepEqual(err.data, { errno: "ENOENT" });
  assert.match(err.message, /fs\/readFile: no such file \/x \(code -32603\)/);
});

Deno.test("RpcPeer: responses to unknown ids and id-less errors are reported, not sent", () => {
  const { peer, sent, problems } = makePeer();
  peer.receive('{"id":99,"result":1}');
  peer.receive('{"id":null,"error":{"code":-32700,"message":"parse error"}}');
  assert.deepEqual(sent, []);
  assert.equal(problems.length, 2);
  assert.match(problems[0], /unknown id 99/);
  assert.match(problems[1], /parse error/);
});

Deno.test("RpcPeer: close rejects pending and later calls; nothing is sent after it", async () => {
  const { peer, sent } = makePeer({ onRequest: () => "late" });
  const pending = peer.request("slow");
  peer.close("gone away");
  await assert.rejects(pending, (e) => e instanceof PeerClosedError && /gone away/.test(e.message));
  await assert.rejects(peer.request("after"), PeerClosedError);
  assert.equal(peer.closed, true);
  const before = sent.length;
  peer.notify("x");
  peer.receive('{"id":5,"method":"m"}');
  peer.receive("not json");
  peer.sendUnattributedError(-32600, "x");
  assert.equal(sent.length, before);
  // A late response to the closed call changes nothing.
  peer.receive('{"id":1,"result":1}');
});

Deno.test("RpcPeer: close can build its own rejection", async () => {
  const { peer } = makePeer();
  const pending = peer.request("m");
  peer.close("eof", (reason) => new RangeError(`custom ${reason}`));
  await assert.rejects(pending, RangeError);
});

Deno.test("RpcPeer: a failing send rejects the call and leaves nothing pending", async () => {
  const peer = new RpcPeer({
    send: () => {
      throw new Error("transport down");
    },
  });
  await assert.rejects(peer.request("m"), /transport down/);
  assert.equal(peer.pendingCount, 0);
});

Deno.test("RpcPeer: text that is not JSON is answered with -32700 and id null", () => {
  const { peer, sent } = makePeer();
  peer.receive("{oops");
  assert.equal(sent.length, 1);
  assert.equal(sent[0].id, null);
  assert.equal(sent[0].error.code, ErrorCode.ParseError);
});

Deno.test("RpcPeer: invalid messages are answered with -32600, echoing a readable id", () => {
  const { peer, sent } = makePeer({ onRequest: () => assert.fail("handler called") });
  peer.receive("[1,2]");
  peer.receive("17");
  peer.receive('{"id":4,"what":"ever"}');
  peer.receive('{"id":5,"method":3}');
  peer.receive('{"id":[1],"method":"m"}');
  assert.deepEqual(sent.map((m) => [m.id, m.error.code]), [
    [null, -32600],
    [null, -32600],
    [4, -32600],
    [5, -32600],
    [null, -32600],
  ]);
  assert.match(sent[0].error.message, /^invalid request: .*array/);
});

Deno.test("RpcPeer: notifications go to onNotification and are never answered", () => {
  const seen: [string, unknown][] = [];
  const { peer, sent, problems } = makePeer({
    onNotification: (method, params) => {
      seen.push([method, params]);
      if (method === "boom") throw new Error("handler broke");
    },
  });
  peer.receive('{"method":"process/output","params":{"seq":1}}');
  peer.receive('{"method":"boom"}');
  assert.deepEqual(seen, [["process/output", { seq: 1 }], ["boom", undefined]]);
  assert.deepEqual(sent, []);
  assert.match(problems[0], /boom failed: Error: handler broke/);
});

Deno.test("RpcPeer: notify sends a notification with or without params", () => {
  const { peer, sent } = makePeer();
  peer.notify("initialized");
  peer.notify("n", { a: [1] });
  assert.deepEqual(sent, [{ method: "initialized" }, { method: "n", params: { a: [1] } }]);
});

Deno.test("RpcPeer: request handlers answer with results, sync and async", async () => {
  const { peer, sent } = makePeer({
    onRequest: (method, params, id) => {
      if (method === "sync") return { echo: params, id };
      if (method === "async") return new Promise((r) => setTimeout(() => r(["later"]), 5));
      return undefined;
    },
  });
  peer.receive('{"id":"a","method":"async"}');
  peer.receive('{"id":"b","method":"sync","params":[1]}');
  peer.receive('{"id":"c","method":"nothing"}');
  assert.deepEqual(sent, [
    { id: "b", result: { echo: [1], id: "b" } },
    { id: "c", result: {} },
  ]);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(sent[2], { id: "a", result: ["later"] });
});

Deno.test("RpcPeer: handler errors become error responses", async () => {
  const { peer, sent, problems } = makePeer({
    onRequest: (method) => {
      if (method === "rpc") throw new RpcError(-32602, "x must be a string", { field: "x" });
      if (method === "plain") throw new TypeError("cannot read y");
      return Promise.reject(new RpcError(-32603, "async failure", { errno: "EIO" }));
    },
  });
  peer.receive('{"id":1,"method":"rpc"}');
  peer.receive('{"id":2,"method":"plain"}');
  peer.receive('{"id":3,"method":"rejects"}');
  await tick();
  assert.deepEqual(sent, [
    { id: 1, error: { code: -32602, message: "x must be a string", data: { field: "x" } } },
    { id: 2, error: { code: -32603, message: "plain failed: cannot read y" } },
    { id: 3, error: { code: -32603, message: "async failure", data: { errno: "EIO" } } },
  ]);
  assert.equal(problems.length, 1, "only the unexpected error is a problem");
});

Deno.test("RpcPeer: without a request handler every method is unknown (-32601)", () => {
  const { peer, sent } = makePeer();
  peer.receive('{"id":1,"method":"anything"}');
  assert.deepEqual(sent, [{ id: 1, error: { code: -32601, message: "unknown method anything" } }]);
});

Deno.test("RpcPeer: ResultWithEffect runs its effect right after the response is sent", async () => {
  const order: string[] = [];
  const peer = new RpcPeer({
    send: (frame) => order.push(`sent ${frameText(frame)}`),
    onRequest: () =>
      Promise.resolve(new ResultWithEffect({ processId: "p" }, () => order.push("effect"))),
  });
  peer.receive('{"id":1,"method":"process/start"}');
  await tick();
  assert.deepEqual(order, ['sent {"id":1,"result":{"processId":"p"}}', "effect"]);
});

Deno.test("RpcPeer: a response that arrives after close is not sent", async () => {
  const { peer, sent } = makePeer({
    onRequest: () => new Promise((r) => setTimeout(() => r("late"), 5)),
  });
  peer.receive('{"id":1,"method":"slow"}');
  peer.close("eof");
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(sent, []);
});

Deno.test("RpcPeer: with binaryFrames, a marked Base64Part goes as a binary frame; else as base64", () => {
  const frames: unknown[] = [];
  const data = new Uint8Array([104, 105]);
  const handler = (_method: string, params: unknown) => ({
    dataBase64: new Base64Part(data, { binaryFrame: (params as { bin: boolean }).bin }),
  });
  const peer = new RpcPeer({ send: (f) => frames.push(f), binaryFrames: true, onRequest: handler });
  peer.receive('{"id":1,"method":"fs/readFile","params":{"bin":true}}');
  peer.receive('{"id":2,"method":"fs/readFile","params":{"bin":false}}');
  assert.ok(frames[0] instanceof BinaryFrame);
  assert.equal(frames[0].header(), '#2 dataBase64 {"id":1,"result":{}}\n');
  assert.equal(frameText(frames[1] as string), '{"id":2,"result":{"dataBase64":"aGk="}}');
  // A transport without binary frames gets base64 even for a marked part.
  const texts: string[] = [];
  const plain = new RpcPeer({ send: (f) => texts.push(frameText(f)), onRequest: handler });
  plain.receive('{"id":3,"method":"fs/readFile","params":{"bin":true}}');
  assert.deepEqual(texts, ['{"id":3,"result":{"dataBase64":"aGk="}}']);
});

Deno.test("RpcPeer: a received payload fills its field; one with no place is refused, by id", () => {
  const got: unknown[] = [];
  const { peer, sent } = makePeer({ onRequest: (_m, params) => (got.push(params), {}) });
  const bytes = new Uint8Array([1, 2, 3]);
  peer.receive('{"id":1,"method":"fs/writeFile","params":{"path":"/x"}}', {
    field: "dataBase64",
    bytes,
  });
  const params = got[0] as { path: string; dataBase64: Base64Part };
  assert.equal(params.path, "/x");
  assert.deepEqual(params.dataBase64.bytes, bytes);
  peer.receive('{"id":2,"method":"fs/writeFile","params":{"dataBase64":"AQID"}}', {
    field: "dataBase64",
    bytes,
  });
  assert.equal(got.length, 1, "the handler never saw the second request");
  assert.equal(sent[1].id, 2);
  assert.equal(sent[1].error.code, ErrorCode.InvalidRequest);
  assert.match(sent[1].error.message, /3-byte payload has no place: "dataBase64"/);
});

Deno.test("RpcPeer: with releaseSentPayloads, a sent frame's adopted payload is freed after send", () => {
  const copies: Uint8Array[] = [];
  const handler = (_method: string, params: unknown) => {
    const buffer = new ArrayBuffer(3);
    new Uint8Array(buffer).set([104, 105, 33]);
    if ((params as { adopt: boolean }).adopt) payloadPool.adopt(buffer);
    return { dataBase64: new Base64Part(new Uint8Array(buffer), { binaryFrame: true }) };
  };
  const freed: boolean[] = [];
  for (const release of [true, false]) {
    const peer = new RpcPeer({
      // A transport copies the payload during send (FrameConnection.send).
      send: (f) => {
        assert.ok(f instanceof BinaryFrame);
        copies.push(f.bytes.slice());
        queueMicrotask(() => freed.push(f.bytes.buffer.byteLength === 0));
      },
      binaryFrames: true,
      releaseSentPayloads: release,
      onRequest: handler,
    });
    peer.receive('{"id":1,"method":"fs/readFile","params":{"adopt":true}}');
    peer.receive('{"id":2,"method":"fs/readFile","params":{"adopt":false}}');
  }
  return Promise.resolve().then(() => {
    // Only the adopted buffer, and only where the peer releases payloads.
    assert.deepEqual(freed, [true, false, false, false]);
    assert.deepEqual(copies.map((c) => [...c]), Array(4).fill([104, 105, 33]));
  });
});
