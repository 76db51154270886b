import assert from "node:assert/strict";
import { WaterMarks } from "./water_marks.ts";

Deno.test("WaterMarks: defaults are 8 MiB and a quarter of the high mark", () => {
  assert.deepEqual(
    [new WaterMarks().high, new WaterMarks().low],
    [8 * 1024 * 1024, 2 * 1024 * 1024],
  );
  assert.equal(new WaterMarks({ highWaterBytes: 1003 }).low, 250);
  assert.equal(new WaterMarks({ highWaterBytes: 1000, lowWaterBytes: 0 }).low, 0);
});

Deno.test("WaterMarks: congested only above the high mark", () => {
  const marks = new WaterMarks({ highWaterBytes: 100, lowWaterBytes: 10 });
  assert.equal(marks.grew(100), true);
  assert.equal(marks.congested, false);
  assert.equal(marks.grew(101), false);
  assert.equal(marks.congested, true);
  // Still congested below the high mark until the queue drains.
  assert.equal(marks.grew(50), false);
});

Deno.test("WaterMarks: drain listeners run once, at or below the low mark", () => {
  const marks = new WaterMarks({ highWaterBytes: 100, lowWaterBytes: 10 });
  const calls: string[] = [];
  marks.onDrain(() => calls.push(`a:${marks.congested}`));
  marks.onDrain(() => calls.push("b"));
  // Not congested: shrinking fires nothing.
  assert.equal(marks.shrank(0), false);
  marks.grew(200);
  assert.equal(marks.shrank(11), false);
  assert.deepEqual(calls, []);
  assert.equal(marks.shrank(10), true);
  // Congestion is cleared before the listeners run, in the order added.
  assert.deepEqual(calls, ["a:false", "b"]);
  assert.equal(marks.shrank(0), false);
  assert.deepEqual(calls, ["a:false", "b"]);
});

Deno.test("WaterMarks: a listener may congest the queue again", () => {
  const marks = new WaterMarks({ highWaterBytes: 100, lowWaterBytes: 10 });
  let drained = 0;
  marks.onDrain(() => {
    drained++;
    if (drained === 1) marks.grew(500);
  });
  marks.grew(500);
  marks.shrank(0);
  assert.equal(marks.congested, true);
  marks.shrank(0);
  assert.equal(drained, 2);
  assert.equal(marks.congested, false);
});
