import assert from "node:assert/strict";
import { ExitedRetention } from "./exited_retention.ts";

function kept(limits: { maxCount: number; maxBytes: number; ttlMs?: number }) {
  const dropped: string[] = [];
  const r = new ExitedRetention<string>(
    { ttlMs: 60_000, ...limits },
    (k) => dropped.push(k),
  );
  return { r, dropped };
}

Deno.test("ExitedRetention drops the oldest beyond the count", () => {
  const { r, dropped } = kept({ maxCount: 2, maxBytes: 1000 });
  r.add("a", 1);
  r.add("b", 1);
  assert.deepEqual(dropped, []);
  r.add("c", 1);
  assert.deepEqual(dropped, ["a"]);
  assert.equal(r.size, 2);
  assert.equal(r.bytes, 2);
  r.clear();
});

Deno.test("ExitedRetention drops the oldest beyond the byte budget, never the newest", () => {
  const { r, dropped } = kept({ maxCount: 10, maxBytes: 100 });
  r.add("a", 60);
  r.add("b", 30);
  assert.deepEqual(dropped, []);
  r.add("c", 50); // 140 > 100: a goes, 80 left
  assert.deepEqual(dropped, ["a"]);
  r.add("d", 500); // alone over budget: everything older goes, d stays
  assert.deepEqual(dropped, ["a", "b", "c"]);
  assert.equal(r.size, 1);
  assert.equal(r.bytes, 500);
  r.clear();
});

Deno.test("ExitedRetention: delete and clear forget without telling; the ttl tells", async () => {
  const { r, dropped } = kept({ maxCount: 10, maxBytes: 1000, ttlMs: 10 });
  r.add("a", 5);
  r.add("b", 5);
  r.delete("a");
  assert.equal(r.size, 1);
  assert.equal(r.bytes, 5);
  await new Promise((res) => setTimeout(res, 40));
  assert.deepEqual(dropped, ["b"]);
  assert.equal(r.size, 0);
  r.add("c", 5);
  r.clear();
  await new Promise((res) => setTimeout(res, 40));
  assert.deepEqual(dropped, ["b"]);
});

Deno.test("ExitedRetention: adding a key again moves it to the newest place", () => {
  const { r, dropped } = kept({ maxCount: 2, maxBytes: 1000 });
  r.add("a", 1);
  r.add("b", 1);
  r.add("a", 3);
  assert.equal(r.bytes, 4);
  r.add("c", 1);
  assert.deepEqual(dropped, ["b"]);
  r.clear();
});

Deno.test("ExitedRetention: held, nobody expires (the bounds still drop); released, clocks restart", async () => {
  const { r, dropped } = kept({ maxCount: 2, maxBytes: 1000, ttlMs: 30 });
  r.add("a", 1);
  r.hold();
  r.add("b", 1);
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.deepEqual(dropped, []);
  r.add("c", 1); // The count bound holds while held.
  assert.deepEqual(dropped, ["a"]);
  r.release();
  r.release(); // Twice is once.
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.deepEqual(dropped.sort(), ["a", "b", "c"]);
  r.clear();
});
