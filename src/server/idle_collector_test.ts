import assert from "node:assert/strict";
import { IdleCollector } from "./idle_collector.ts";
import { collectGarbage } from "../runtime/gc.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("IdleCollector collects once after enough exits and quiet", async () => {
  let runs = 0;
  const c = new IdleCollector({ idleMs: 20, minExits: 3, collect: () => (runs++, true) });
  c.exited();
  c.exited();
  await sleep(50);
  assert.equal(runs, 0, "too few exits");
  c.exited();
  await sleep(50);
  assert.equal(runs, 1);
  await sleep(50);
  assert.equal(runs, 1, "once per burst");
  c.stop();
});

Deno.test("IdleCollector waits while processes keep starting", async () => {
  let runs = 0;
  const c = new IdleCollector({ idleMs: 40, minExits: 1, collect: () => (runs++, true) });
  c.exited();
  for (let i = 0; i < 4; i++) {
    await sleep(15);
    c.started();
  }
  assert.equal(runs, 0);
  await sleep(80);
  assert.equal(runs, 1);
  c.stop();
});

Deno.test("collectGarbage runs a collection on this runtime", () => {
  assert.equal(collectGarbage(), true);
});
