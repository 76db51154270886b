import assert from "node:assert/strict";
import { TransferCollector } from "./transfer_collector.ts";

const tick = () => new Promise((r) => setTimeout(r, 10));

Deno.test("TransferCollector collects once per everyBytes written, after the request", async () => {
  let runs = 0;
  const c = new TransferCollector({ everyBytes: 100, collect: () => (runs++, true) });
  c.wrote(60);
  await tick();
  assert.equal(runs, 0, "not enough written");
  c.read(60);
  await tick();
  assert.equal(runs, 0, "a read counts half: 90 of 100");
  c.wrote(20);
  assert.equal(runs, 0, "never inside the request itself");
  await tick();
  assert.equal(runs, 1);
  c.wrote(500);
  c.wrote(500); // a collection is already pending: one is enough
  await tick();
  assert.equal(runs, 2);
  c.read(200);
  c.stop();
  await tick();
  assert.equal(runs, 2, "stop cancels a pending collection");
});
