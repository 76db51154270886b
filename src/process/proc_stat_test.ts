import assert from "node:assert/strict";
import process from "node:process";
import { parseProcStat, readAllProcStats, readProcStat } from "./proc_stat.ts";

Deno.test("parseProcStat names the fields, whatever the command name holds", () => {
  const text =
    "4242 (we) ird (name)) S 1 4242 4200 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 98765 0 0";
  assert.deepEqual(parseProcStat(text), {
    pid: 4242,
    comm: "we) ird (name)",
    state: "S",
    ppid: 1,
    pgrp: 4242,
    session: 4200,
    tpgid: -1,
    startTime: "98765",
  });
  assert.equal(parseProcStat("not a stat"), undefined);
  assert.equal(parseProcStat("1 (x) S 0"), undefined);
});

Deno.test("readProcStat reads this process; readAllProcStats includes it", async () => {
  const self = await readProcStat(process.pid);
  assert.equal(self?.pid, process.pid);
  assert.equal(self?.ppid, process.ppid);
  assert.ok((await readAllProcStats())?.some((s) => s.pid === process.pid));
  assert.equal(await readProcStat(2 ** 30), undefined);
});

Deno.test("readAllProcStats: callers during a scan share the next one (a burst costs two)", async () => {
  const calls = Array.from({ length: 30 }, () => readAllProcStats());
  assert.ok(new Set(calls).size <= 2, `${new Set(calls).size} scans for 30 callers`);
  for (const stats of await Promise.all(calls)) {
    assert.ok(stats!.some((s) => s.pid === process.pid), "each scan sees this process");
  }
  // Once the burst is over, a caller gets a scan of its own again.
  const later = readAllProcStats();
  assert.ok(!calls.includes(later));
  await later;
});
