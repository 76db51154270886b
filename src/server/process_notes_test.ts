import assert from "node:assert/strict";
import { exitedNote, outputNote, readResult } from "./process_notes.ts";
import { OutputBuffer } from "./output_buffer.ts";

const exit = { exitCode: 0, signal: null, exitedAtMs: 2000, durationMs: 1.5 };

Deno.test("outputNote and exitedNote are the wire notifications", () => {
  assert.deepEqual(JSON.parse(outputNote('"p\\"1"', "stdout", new Uint8Array([104, 105]), 7)), {
    method: "process/output",
    params: { processId: 'p"1', stream: "stdout", chunk: "aGk=", seq: 7 },
  });
  assert.deepEqual(JSON.parse(exitedNote("p", 1000, exit)), {
    method: "process/exited",
    params: {
      processId: "p",
      exitCode: 0,
      signal: null,
      startedAtMs: 1000,
      exitedAtMs: 2000,
      durationMs: 1.5,
    },
  });
});

Deno.test("readResult reports the exit only with the last chunk", () => {
  const buf = new OutputBuffer(1024);
  buf.append("stdout", new Uint8Array([1, 2]));
  buf.append("stderr", new Uint8Array([3]));
  const first = readResult(buf.read(0, 1), exit);
  assert.equal(first.exited, false);
  assert.equal(first.exitCode, null);
  assert.equal(first.chunks.length, 1);
  const rest = readResult(buf.read(first.nextSeq - 1), exit);
  assert.equal(rest.exited, true);
  assert.equal(rest.exitCode, 0);
  assert.equal(rest.signal, null);
  assert.equal(rest.durationMs, 1.5);
  assert.equal(readResult(buf.read(0), undefined).exited, false);
});
