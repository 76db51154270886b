import assert from "node:assert/strict";
import { ReplayGate, sessionRequest, sshSessionOptions } from "./session_mode.ts";
import type { OutputChunk, ProcessExit, ProcessSink } from "./process_handle.ts";
import { encodeBase64 } from "../protocol/base64.ts";

function recorder(): { sink: ProcessSink; seqs: number[]; exits: ProcessExit[] } {
  const seqs: number[] = [];
  const exits: ProcessExit[] = [];
  return {
    seqs,
    exits,
    sink: {
      output: (c: OutputChunk) => seqs.push(c.seq),
      exited: (e) => exits.push(e),
      failed: () => {},
    },
  };
}

const chunk = (seq: number) => ({ seq, stream: "stdout" as const, data: new Uint8Array([seq]) });
const read = (seqs: number[], exited = false) => ({
  chunks: seqs.map((seq) => ({
    seq,
    stream: "stdout" as const,
    chunk: encodeBase64(new Uint8Array([seq])),
  })),
  nextSeq: (seqs.at(-1) ?? 0) + 1,
  exited,
  exitCode: exited ? 3 : null,
});

Deno.test("ReplayGate: live notes wait for the replay; every seq once, in order", () => {
  const out = recorder();
  const gate = new ReplayGate(out.sink, 1);
  gate.sink.output(chunk(3)); // Live, racing the replay: held.
  assert.deepEqual(out.seqs, []);
  assert.equal(gate.replayed(read([1, 2, 3])), false); // seq 1 was had already.
  assert.deepEqual(out.seqs, [2, 3]);
  assert.equal(gate.replayed(read([])), true); // Caught up.
  gate.sink.output(chunk(4));
  assert.deepEqual(out.seqs, [2, 3]);
  gate.open();
  assert.deepEqual(out.seqs, [2, 3, 4]); // The held repeat of 3 was dropped.
  gate.sink.output(chunk(5));
  gate.sink.exited({ exitCode: 0, signal: null, durationMs: 1 });
  gate.sink.exited({ exitCode: 9, signal: null, durationMs: 1 });
  assert.deepEqual(out.seqs, [2, 3, 4, 5]);
  assert.deepEqual(out.exits.map((e) => e.exitCode), [0]);
});

Deno.test("ReplayGate: an exit read back ends it; held notes are then dropped", () => {
  const out = recorder();
  const gate = new ReplayGate(out.sink, 0);
  gate.sink.output(chunk(2));
  gate.sink.exited({ exitCode: 3, signal: null, durationMs: 1 });
  assert.equal(gate.replayed(read([1, 2], true)), true);
  gate.open();
  assert.deepEqual(out.seqs, [1, 2]);
  assert.deepEqual(out.exits.map((e) => e.exitCode), [3]);
});

Deno.test("session options: resume or a sessionId ask for a session; ssh is not waited for", () => {
  assert.equal(sessionRequest({}), undefined);
  assert.deepEqual(sessionRequest({ resume: true }), {});
  assert.deepEqual(sessionRequest({ sessionId: "s" }), { resume: "s" });
  assert.equal(sshSessionOptions({ closeTimeoutMs: 9000 }).closeTimeoutMs, 9000);
  assert.ok(sshSessionOptions({ resume: true, closeTimeoutMs: 9000 }).closeTimeoutMs! < 1000);
});
