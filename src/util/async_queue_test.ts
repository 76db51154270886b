import assert from "node:assert/strict";
import { AsyncQueue } from "./async_queue.ts";

Deno.test("AsyncQueue delivers what was pushed before and after reading starts", async () => {
  const q = new AsyncQueue<number>();
  q.push(1);
  const seen: number[] = [];
  const done = (async () => {
    for await (const n of q) seen.push(n);
  })();
  q.push(2);
  q.end();
  await done;
  assert.deepEqual(seen, [1, 2]);
});

Deno.test("AsyncQueue: an error comes after the buffered values", async () => {
  const q = new AsyncQueue<number>();
  q.push(1);
  q.end(new Error("boom"));
  const seen: number[] = [];
  await assert.rejects(async () => {
    for await (const n of q) seen.push(n);
  }, /boom/);
  assert.deepEqual(seen, [1]);
});

Deno.test("AsyncQueue: stopping early calls onCancel", async () => {
  let cancelled = 0;
  const q = new AsyncQueue<number>(() => cancelled++);
  q.push(1);
  q.push(2);
  for await (const _ of q) break;
  assert.equal(cancelled, 1);
});
