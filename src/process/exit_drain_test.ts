import assert from "node:assert/strict";
import { ExitDrain } from "./exit_drain.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STATUS = { exitCode: 0, signal: null };

Deno.test("ExitDrain: silence after exit ends the wait, forced", async () => {
  const done: boolean[] = [];
  const d = new ExitDrain(1, 10, (_s, forced) => done.push(forced));
  d.exit(STATUS);
  await sleep(60);
  assert.deepEqual(done, [true]);
});

Deno.test("ExitDrain: with a fence on its way, silence never ends the wait", async () => {
  const done: boolean[] = [];
  const d = new ExitDrain(1, 10, (_s, forced) => done.push(forced));
  d.fence();
  d.exit(STATUS);
  await sleep(60);
  d.resume();
  await sleep(30);
  assert.deepEqual(done, []);
  d.streamEnded();
  assert.deepEqual(done, [false]);
});

Deno.test("ExitDrain: silence that is not confirmed waits on", async () => {
  const done: boolean[] = [];
  let asked = 0;
  const d = new ExitDrain(1, 10, (_s, forced) => done.push(forced), () => ++asked > 2);
  d.exit(STATUS);
  await sleep(150);
  assert.ok(asked >= 3, `asked ${asked} times`);
  assert.deepEqual(done, [true]);
});
