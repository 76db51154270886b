import assert from "node:assert/strict";
import { ByteBudget } from "./byte_budget.ts";

Deno.test("ByteBudget: shares within the limit are granted at once", async () => {
  const budget = new ByteBudget(10);
  const a = await budget.take(4);
  const b = await budget.take(6);
  assert.equal(budget.inUse, 10);
  a();
  b();
  assert.equal(budget.inUse, 0);
});

Deno.test("ByteBudget: a share that does not fit waits, in arrival order", async () => {
  const budget = new ByteBudget(10);
  const first = await budget.take(8);
  const order: string[] = [];
  const big = budget.take(5).then((release) => {
    order.push("big");
    return release;
  });
  // Fits by itself, but arrived after a waiting share: it queues behind it.
  const small = budget.take(1).then((release) => {
    order.push("small");
    return release;
  });
  await Promise.resolve();
  assert.deepEqual(order, []);
  first();
  const releases = await Promise.all([big, small]);
  assert.deepEqual(order, ["big", "small"]);
  assert.equal(budget.inUse, 6);
  releases.forEach((r) => r());
  assert.equal(budget.inUse, 0);
});

Deno.test("ByteBudget: an oversized share runs alone; a double release counts once", async () => {
  const budget = new ByteBudget(10);
  const huge = await budget.take(1000);
  assert.equal(budget.inUse, 10);
  let granted = false;
  const next = budget.take(1).then((r) => {
    granted = true;
    return r;
  });
  await Promise.resolve();
  assert.equal(granted, false);
  huge();
  huge();
  (await next)();
  assert.equal(budget.inUse, 0);
  assert.throws(() => new ByteBudget(0), /positive integer, got 0/);
});
