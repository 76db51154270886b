/**
 * Clean shutdown: SIGTERM or SIGINT to the server sends SIGTERM to every
 * child tree, SIGKILLs what is left after `--shutdown-grace-ms`, and exits 0.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { eventually, isAlive, type Msg, TestServer } from "./harness.ts";
import { waitMatch } from "./server_helpers.ts";

const GRACE_MS = 300;

/**
 * Signal the server by pid. Deno's `ChildProcess.kill()` reports the child
 * as killed by that signal even when it handled it and exited 0.
 */
function signalServer(s: TestServer, signal: "SIGTERM" | "SIGINT"): void {
  process.kill(s.child.pid!, signal);
}

/** The server's exit, or a failure saying `why` when it still runs 10 s on. */
async function exitedWithin10s(s: TestServer, why: string): Promise<Awaited<TestServer["exited"]>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      s.exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(why)), 10_000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.test(`${signal} to the server: children get SIGTERM, then SIGKILL, exit 0`, async () => {
    const dir = await Deno.makeTempDir();
    const marker = `${dir}/term`;
    const s = await TestServer.start(["--shutdown-grace-ms", String(GRACE_MS)]);
    const pids: number[] = [];
    try {
      // Proves SIGTERM arrives: the trap writes a marker file.
      await s.start("polite", [
        "sh",
        "-c",
        `trap 'echo got-term > ${marker}; exit 0' TERM; echo ready; ` +
        "while :; do sleep 0.05; done",
      ]);
      // Ignores SIGTERM (inherited by its children), and has a grandchild
      // that escaped into a session of its own.
      await s.start("stubborn", [
        "sh",
        "-c",
        "trap '' TERM; setsid sh -c 'while :; do sleep 0.05; done' >/dev/null 2>&1 & " +
        "echo escaped=$!; echo leader=$$; while :; do sleep 0.05; done",
      ]);
      // A PTY child that ignores SIGTERM too.
      await s.start("tty", [
        "sh",
        "-c",
        "trap '' TERM; echo leader=$$; while :; do sleep 0.05; done",
      ], {
        tty: true,
      });
      await waitMatch(s, "polite", /ready\n/);
      const stubborn = await waitMatch(s, "stubborn", /escaped=(\d+)\nleader=(\d+)\n/);
      const tty = await waitMatch(s, "tty", /leader=(\d+)\r\n/);
      pids.push(Number(stubborn[1]), Number(stubborn[2]), Number(tty[1]));
      for (const pid of pids) assert.ok(await isAlive(pid), `pid ${pid} runs`);

      const sentAt = performance.now();
      signalServer(s, signal);
      const exit = await exitedWithin10s(s, `server still running 10 s after ${signal}`);
      const elapsed = performance.now() - sentAt;
      assert.deepEqual(exit, { code: 0, signal: null });
      // Stubborn children made the server wait for the whole grace period.
      assert.ok(elapsed >= GRACE_MS, `exited after ${elapsed} ms, grace ${GRACE_MS} ms`);

      assert.equal(await Deno.readTextFile(marker), "got-term\n");
      for (const pid of pids) {
        await eventually(async () => !(await isAlive(pid)), 5_000, `pid ${pid} to die`);
      }
      // The exits the server saw before it stopped were reported in full.
      const exited = (id: string): Msg | undefined =>
        s.messages.find((m) => m.method === "process/exited" && m.params.processId === id);
      assert.equal(exited("polite")?.params.exitCode, 0);
      for (const id of ["stubborn", "tty"]) {
        assert.equal(exited(id)?.params.signal, "SIGKILL", `${id} was killed and reported`);
        assert.equal(exited(id)?.params.exitCode, 137);
      }
      assert.equal(s.badLines.length, 0, `stdout held non-JSON: ${s.badLines}`);
    } finally {
      for (const pid of pids) {
        if (await isAlive(pid)) Deno.kill(pid, "SIGKILL");
      }
      s.kill();
      await s.exited;
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("SIGTERM to an idle server exits 0 at once, without waiting for the grace", async () => {
  const s = await TestServer.start(["--shutdown-grace-ms", "60000"]);
  try {
    await s.start("done", ["true"]);
    await s.waitExited("done");
    signalServer(s, "SIGTERM");
    const exit = await exitedWithin10s(s, "server waited for the grace period");
    assert.deepEqual(exit, { code: 0, signal: null });
  } finally {
    s.kill();
    await s.exited;
  }
});

Deno.test("SIGTERM: children that exit on SIGTERM end the wait before the grace", async () => {
  const s = await TestServer.start(["--shutdown-grace-ms", "60000"]);
  try {
    await s.start("a", ["sleep", "30"]);
    await s.start("b", ["sleep", "30"], { tty: true });
    signalServer(s, "SIGTERM");
    const exit = await exitedWithin10s(s, "server waited for the grace period");
    assert.deepEqual(exit, { code: 0, signal: null });
    for (const id of ["a", "b"]) {
      const note = s.messages.find((m) =>
        m.method === "process/exited" && m.params.processId === id
      );
      assert.equal(note?.params.signal, "SIGTERM", `${id} exit was reported`);
    }
  } finally {
    s.kill();
    await s.exited;
  }
});

Deno.test("SIGTERM: output and exits produced during shutdown reach the client", async () => {
  const s = await TestServer.start(["--shutdown-grace-ms", "10000"]);
  try {
    const bytes = 2_000_000;
    // On SIGTERM the child writes a burst, then exits 0.
    await s.start("burst", [
      "sh",
      "-c",
      `trap 'head -c ${bytes} /dev/zero | tr "\\0" z; exit 0' TERM; echo ready; ` +
      "while :; do sleep 0.05; done",
    ]);
    await s.waitFor(() => s.outputText("burst", "stdout") === "ready\n", 10_000, "ready");
    signalServer(s, "SIGTERM");
    const exit = await s.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.equal(s.outputText("burst", "stdout"), "ready\n" + "z".repeat(bytes));
    const note = s.messages.find((m) =>
      m.method === "process/exited" && m.params.processId === "burst"
    );
    assert.equal(note?.params.exitCode, 0);
  } finally {
    s.kill();
    await s.exited;
  }
});
