import assert from "node:assert/strict";
import { createConnectionPair } from "../../transport/in_process.ts";
import type { FrameConnection } from "../../rpc/connection.ts";
import { ResumingConnection } from "./resuming.ts";

// deno-lint-ignore no-explicit-any
type Msg = Record<string, any>;

/** The server's end of an in-memory pair, scripted by `answer`. */
function fakeServer(end: FrameConnection, answer: (m: Msg, send: (m: Msg) => void) => void) {
  const send = (m: Msg) => end.send(JSON.stringify(m));
  (async () => {
    for await (const f of end.frames()) if (f.kind === "text") answer(JSON.parse(f.text), send);
  })();
  return send;
}

/** Pull the next `n` text frames (without ending the stream, as a `break` would). */
async function collect(it: AsyncIterator<{ kind: string; text?: string }>, n: number) {
  const out: Msg[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    if (r.value.kind === "text") out.push(JSON.parse(r.value.text!));
  }
  return out;
}

Deno.test("ResumingConnection resumes, replays what was missed, drops repeats, fails in-flight calls", async () => {
  const [client1, server1] = createConnectionPair();
  const send1 = fakeServer(server1, (m, send) => {
    if (m.method === "initialize") send({ id: m.id, result: { session: { id: "S" } } });
    if (m.method === "process/start") send({ id: m.id, result: { processId: "p" } });
  });
  const [client2, server2] = createConnectionPair();
  const seen2: Msg[] = [];
  const send2 = fakeServer(server2, (m, send) => {
    seen2.push(m);
    if (m.method === "initialize") {
      send({ id: m.id, result: { session: { id: m.params.session.resume } } });
    }
    if (m.method === "process/read") {
      // A live note racing the replay: held, then dropped as a repeat.
      send({
        method: "process/output",
        params: { processId: "p", stream: "stdout", chunk: "Yg==", seq: 2 },
      });
      send({
        id: m.id,
        result: {
          chunks: [{ seq: 2, stream: "stdout", chunk: "Yg==" }],
          nextSeq: 3,
          exited: false,
        },
      });
    }
  });
  let opens = 0;
  const conn = new ResumingConnection({ connection: client1, lifetime: {} }, {
    open: () => {
      opens++;
      return Promise.resolve({ connection: client2, lifetime: {} });
    },
    clientName: "t",
  });
  const frames = conn.frames()[Symbol.asyncIterator]();
  conn.send(JSON.stringify({ id: 1, method: "initialize", params: { session: {} } }));
  conn.send(JSON.stringify({ id: 2, method: "process/start", params: { processId: "p" } }));
  const first = await collect(frames, 2);
  assert.equal(conn.sessionId, "S");
  assert.deepEqual(first.map((m) => m.id), [1, 2]);
  send1({
    method: "process/output",
    params: { processId: "p", stream: "stdout", chunk: "YQ==", seq: 1 },
  });
  conn.send(JSON.stringify({ id: 3, method: "fs/readFile", params: { path: "/x" } }));
  await server1.close(); // the drop, with request 3 unanswered
  const after = await collect(frames, 3);
  assert.equal(opens, 1);
  assert.deepEqual(after[0].params, { processId: "p", stream: "stdout", chunk: "YQ==", seq: 1 });
  assert.equal(after[1].id, 3);
  assert.match(after[1].error.message, /dropped before fs\/readFile was answered/);
  assert.deepEqual(after[2].params, { processId: "p", seq: 2, stream: "stdout", chunk: "Yg==" });
  assert.deepEqual(seen2.map((m) => m.method).slice(0, 3), [
    "initialize",
    "initialized",
    "process/read",
  ]);
  assert.equal(seen2[2].params.afterSeq, 1);
  // After the replay, live notes flow; a repeat of seq 2 was dropped.
  send2({
    method: "process/output",
    params: { processId: "p", stream: "stdout", chunk: "Yw==", seq: 3 },
  });
  // v0's exit has no seq: it passes once the replay is over, and ends the tracking.
  send2({ method: "process/exited", params: { processId: "p", exitCode: 0, signal: null } });
  const [live, exited] = await collect(frames, 2);
  assert.equal(live.params.seq, 3);
  assert.equal(exited.method, "process/exited");
  await conn.close();
});
