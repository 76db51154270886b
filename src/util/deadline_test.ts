import assert from "node:assert/strict";
import { deadline, within } from "./deadline.ts";

const later = <T>(value: T, ms: number) => new Promise<T>((r) => setTimeout(() => r(value), ms));

Deno.test("within: the value in time, undefined after", async () => {
  assert.equal(await within(later("a", 1), 1000), "a");
  assert.equal(await within(later("b", 200), 10), undefined);
  await assert.rejects(within(Promise.reject(new Error("no")), 1000), /no/);
});

Deno.test("deadline: the value in time, the given error after", async () => {
  assert.equal(await deadline(later(1, 1), 1000, () => new Error("late")), 1);
  await assert.rejects(deadline(later(2, 200), 10, () => new RangeError("late")), RangeError);
});
