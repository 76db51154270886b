/**
 * Black-box tests that killing a process kills its whole tree: on
 * `process/terminate`, and when the connection ends (stdin EOF). Survivors
 * are looked for through /proc: the children of the shell's pid.
 */
import assert from "node:assert/strict";
import { descendants, eventually, isAlive, procStat, TestServer } from "./harness.ts";

/** Start `script` under `sh` (it must print `$$` first) and find its sleeps. */
async function startTree(
  s: TestServer,
  id: string,
  script: string,
  sleeps: number,
  tty: boolean,
): Promise<number[]> {
  const res = await s.start(id, ["sh", "-c", `echo $$; ${script}`], { tty });
  assert.deepEqual(res.result, { processId: id }, JSON.stringify(res));
  let shPid = 0;
  await eventually(
    () => {
      const m = /^(\d+)\r?\n/.exec(s.outputText(id));
      if (m) shPid = Number(m[1]);
      return shPid > 0;
    },
    10_000,
    `the pid printed by ${id}`,
  );
  let pids: number[] = [];
  // The shell may also exec its last command, becoming one of the sleeps.
  await eventually(
    async () => {
      const tree = [await procStat(shPid), ...await descendants(shPid)];
      pids = tree.filter((p) => p?.comm === "sleep").map((p) => p!.pid);
      return pids.length === sleeps;
    },
    10_000,
    `${sleeps} sleeps under ${id} (sh pid ${shPid})`,
  );
  return [shPid, ...pids.filter((p) => p !== shPid)];
}

async function assertAllDead(pids: number[], what: string): Promise<void> {
  // Signals are delivered asynchronously: allow a moment, never a survivor.
  await eventually(
    async () => (await Promise.all(pids.map(isAlive))).every((alive) => !alive),
    5_000,
    `${what}: no survivor among ${pids.join(", ")}`,
  );
}

for (const tty of [false, true]) {
  Deno.test(`terminate kills the whole tree (tty: ${tty})`, async () => {
    await using s = await TestServer.start();
    const pids = await startTree(s, "tree", "sleep 300 & sleep 300", 2, tty);
    const term = await s.request("process/terminate", { processId: "tree" });
    assert.deepEqual(term.result, { running: true });
    const exited = await s.waitExited("tree");
    assert.equal(exited.params.signal, "SIGKILL");
    await assertAllDead(pids, "after terminate");
  });

  Deno.test(`stdin EOF kills every tree and the server exits 0 (tty: ${tty})`, async () => {
    const s = await TestServer.start();
    try {
      const a = await startTree(s, "a", "sleep 300 & sleep 300", 2, tty);
      const b = await startTree(s, "b", "sleep 300 & sleep 300 & wait", 2, tty);
      assert.equal((await s.close()).code, 0);
      await assertAllDead([...a, ...b], "after EOF");
    } finally {
      s.kill();
    }
  });
}

Deno.test("terminate also kills a descendant that moved to a session of its own", async () => {
  await using s = await TestServer.start();
  const pids = await startTree(s, "escape", "setsid sleep 300 & sleep 300", 2, false);
  const sids = new Set(
    (await Promise.all(pids.map(procStat))).map((p) => p?.session),
  );
  assert.equal(sids.size, 2, "setsid did not create a second session");
  await s.request("process/terminate", { processId: "escape" });
  await s.waitExited("escape");
  await assertAllDead(pids, "after terminate");
});

Deno.test("stdin EOF kills what an exited leader left running", async () => {
  const s = await TestServer.start(["--exit-drain-ms", "50"]);
  try {
    // The leader exits at once; its background sleep keeps running.
    await s.start("orphan", ["sh", "-c", "sleep 300 & echo $!"]);
    const exited = await s.waitExited("orphan");
    assert.equal(exited.params.exitCode, 0);
    const pid = Number(s.outputText("orphan").trim());
    assert.ok(pid > 0);
    assert.ok(await isAlive(pid), "the background sleep should outlive its shell");
    assert.equal((await s.close()).code, 0);
    await assertAllDead([pid], "after EOF");
  } finally {
    s.kill();
  }
});
