/**
 * Process control beyond v0, end to end over stdio: stdin, EOF, terminal
 * size, signals, graceful termination and whole-tree kills.
 */
import assert from "node:assert/strict";
import {
  b64,
  descendants,
  eventually,
  isAlive,
  type Msg,
  procStat,
  TestServer,
  unb64,
} from "./harness.ts";
import { waitMatch, waitOutput } from "./server_helpers.ts";

/** The index of the first message satisfying `pred`, failing when none does. */
function indexOf(s: TestServer, pred: (m: Msg) => boolean, what: string): number {
  const i = s.messages.findIndex(pred);
  assert.notEqual(i, -1, `no ${what} was received`);
  return i;
}

/** The session id of a live process (failing when it is gone). */
async function sessionOf(pid: number): Promise<number> {
  const info = await procStat(pid);
  assert.ok(info, `pid ${pid} is gone`);
  return info.session;
}

Deno.test("pipeStdin: cat echoes what was written and exits 0 after closeStdin", async () => {
  const s = await TestServer.start();
  try {
    assert.deepEqual((await s.start("cat", ["cat"], { pipeStdin: true })).result, {
      processId: "cat",
    });
    assert.deepEqual(
      await s.call("process/write", { processId: "cat", chunk: b64("hello\n") }),
      { accepted: true },
    );
    await waitOutput(s, "cat", "hello\n");
    await s.call("process/write", { processId: "cat", chunk: b64("world\n") });
    await waitOutput(s, "cat", "hello\nworld\n");
    assert.deepEqual(await s.call("process/closeStdin", { processId: "cat" }), {});
    const exited = await s.waitExited("cat");
    assert.equal(exited.params.exitCode, 0);
    assert.equal(exited.params.signal, null);
    assert.equal(s.outputText("cat", "stdout"), "hello\nworld\n");

    // Once closed, stdin stays closed: a second close and a write are refused.
    const again = await s.request("process/closeStdin", { processId: "cat" });
    assert.equal(again.error?.code, -32600);
    assert.match(again.error.message, /cat/);
    const late = await s.request("process/write", { processId: "cat", chunk: b64("x") });
    assert.equal(late.error?.code, -32600);
  } finally {
    await s.close();
  }
});

Deno.test("pipeStdin: output keeps streaming after closeStdin", async () => {
  const s = await TestServer.start();
  try {
    await s.start("p", ["sh", "-c", "cat; echo after-eof; sleep 0.2; echo still"], {
      pipeStdin: true,
    });
    await s.call("process/write", { processId: "p", chunk: b64("in\n") });
    await waitOutput(s, "p", "in\n");
    await s.call("process/closeStdin", { processId: "p" });
    const closedAt = s.messages.length;
    const exited = await s.waitExited("p");
    assert.equal(exited.params.exitCode, 0);
    assert.equal(s.outputText("p", "stdout"), "in\nafter-eof\nstill\n");
    // "still" is printed 200 ms after EOF, so it must come after the
    // closeStdin response.
    const stillAt = indexOf(
      s,
      (m) =>
        m.method === "process/output" && m.params.processId === "p" &&
        unb64(m.params.chunk).includes("still"),
      "output with 'still'",
    );
    assert.ok(stillAt >= closedAt, `'still' arrived at ${stillAt}, before close at ${closedAt}`);
  } finally {
    await s.close();
  }
});

Deno.test("pipe stdin is closed unless pipeStdin is set", async () => {
  const s = await TestServer.start();
  try {
    // With stdin closed, cat sees EOF at once.
    await s.start("c", ["cat"]);
    const exited = await s.waitExited("c");
    assert.equal(exited.params.exitCode, 0);
    const res = await s.request("process/closeStdin", { processId: "c" });
    assert.equal(res.error?.code, -32600);
    const unknown = await s.request("process/closeStdin", { processId: "nope" });
    assert.equal(unknown.error?.code, -32600);
    assert.match(unknown.error.message, /nope/);
  } finally {
    await s.close();
  }
});

Deno.test("pty: closeStdin sends EOF like a terminal, cat exits 0", async () => {
  const s = await TestServer.start();
  try {
    await s.start("t", ["cat"], { tty: true });
    await s.call("process/write", { processId: "t", chunk: b64("typed\n") });
    // The terminal echoes the line and cat writes it back.
    await s.waitFor(
      () => (s.outputText("t").match(/typed/g) ?? []).length >= 2,
      10_000,
      "echo and cat output",
    );
    assert.deepEqual(await s.call("process/closeStdin", { processId: "t" }), {});
    const exited = await s.waitExited("t");
    assert.equal(exited.params.exitCode, 0);
    assert.equal(exited.params.signal, null);
    const out = s.outputText("t");
    assert.equal(out, "typed\r\ntyped\r\n");
    const late = await s.request("process/write", { processId: "t", chunk: b64("x") });
    assert.equal(late.error?.code, -32600);
  } finally {
    await s.close();
  }
});

Deno.test("pty: initial size and process/resize reach the child with SIGWINCH", async () => {
  const s = await TestServer.start();
  try {
    const script = 'stty size; trap "stty size" WINCH; echo ready; while :; do sleep 0.05; done';
    await s.start("w", ["sh", "-c", script], { tty: true, size: { rows: 30, cols: 100 } });
    await waitOutput(s, "w", "ready");
    assert.match(s.outputText("w"), /^30 100\r\n/);
    assert.deepEqual(
      await s.call("process/resize", { processId: "w", rows: 40, cols: 120 }),
      {},
    );
    await waitOutput(s, "w", "40 120\r\n");
    await s.call("process/resize", { processId: "w", rows: 12, cols: 33 });
    await waitOutput(s, "w", "12 33\r\n");
    assert.deepEqual(await s.call("process/terminate", { processId: "w" }), { running: true });
    await s.waitExited("w");
  } finally {
    await s.close();
  }
});

Deno.test("pty: default size is 24x80 and a later stty sees a resize", async () => {
  const s = await TestServer.start();
  try {
    await s.start("d", ["sh", "-c", "stty size; read line; stty size"], {
      tty: true,
    });
    await waitOutput(s, "d", "24 80\r\n");
    await s.call("process/resize", { processId: "d", rows: 50, cols: 200 });
    await s.call("process/write", { processId: "d", chunk: b64("\n") });
    await s.waitExited("d");
    assert.match(s.outputText("d"), /24 80\r\n[\s\S]*50 200\r\n$/);
  } finally {
    await s.close();
  }
});

Deno.test("process/resize: pipe process -32600, bad sizes -32602", async () => {
  const s = await TestServer.start();
  try {
    await s.start("p", ["sleep", "30"]);
    const res = await s.request("process/resize", { processId: "p", rows: 10, cols: 10 });
    assert.equal(res.error?.code, -32600);
    assert.match(res.error.message, /p has no terminal/);
    await s.start("t", ["sleep", "30"], { tty: true });
    const zero = await s.request("process/resize", { processId: "t", rows: 0, cols: 10 });
    assert.equal(zero.error?.code, -32602);
    assert.match(zero.error.message, /rows/);
    const bad = await s.request("process/start", {
      processId: "b",
      argv: ["true"],
      cwd: "/",
      env: {},
      tty: true,
      size: { rows: 10, cols: "wide" },
    });
    assert.equal(bad.error?.code, -32602);
    assert.match(bad.error.message, /cols/);
    await s.call("process/terminate", { processId: "p" });
    await s.call("process/terminate", { processId: "t" });
  } finally {
    await s.close();
  }
});

Deno.test("process/signal interrupt: sleep dies by SIGINT with 130, read reports it", async () => {
  const s = await TestServer.start();
  try {
    await s.start("z", ["sleep", "30"]);
    assert.deepEqual(
      await s.call("process/signal", { processId: "z", signal: "interrupt" }),
      { signal: "SIGINT" },
    );
    const exited = await s.waitExited("z");
    assert.equal(exited.params.exitCode, 130);
    assert.equal(exited.params.signal, "SIGINT");
    assert.equal(typeof exited.params.durationMs, "number");
    assert.ok(exited.params.durationMs >= 0);
    assert.ok(exited.params.exitedAtMs >= exited.params.startedAtMs);

    const read = await s.call("process/read", { processId: "z" });
    assert.deepEqual(read.chunks, []);
    assert.equal(read.exited, true);
    assert.equal(read.exitCode, 130);
    assert.equal(read.signal, "SIGINT");
    assert.equal(read.durationMs, exited.params.durationMs);

    // A signal to an exited process is refused.
    const late = await s.request("process/signal", { processId: "z", signal: "SIGTERM" });
    assert.equal(late.error?.code, -32600);
  } finally {
    await s.close();
  }
});

Deno.test("process/signal accepts POSIX spellings and rejects unknown names", async () => {
  const s = await TestServer.start();
  try {
    await s.start("u", [
      "sh",
      "-c",
      "trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.05; done",
    ]);
    await waitOutput(s, "u", "ready");
    assert.deepEqual(
      await s.call("process/signal", { processId: "u", signal: "usr1" }),
      { signal: "SIGUSR1" },
    );
    await waitOutput(s, "u", "got-usr1");
    const bad = await s.request("process/signal", { processId: "u", signal: "SIGBOGUS" });
    assert.equal(bad.error?.code, -32602);
    assert.match(bad.error.message, /SIGBOGUS/);
    const unknown = await s.request("process/signal", { processId: "ghost", signal: "TERM" });
    assert.equal(unknown.error?.code, -32600);
    assert.match(unknown.error.message, /ghost/);
    assert.deepEqual(await s.call("process/signal", { processId: "u", signal: "SIGTERM" }), {
      signal: "SIGTERM",
    });
    const exited = await s.waitExited("u");
    assert.equal(exited.params.signal, "SIGTERM");
    assert.equal(exited.params.exitCode, 143);
  } finally {
    await s.close();
  }
});

Deno.test("terminate graceMs: a TERM-ignoring child is SIGKILLed after the grace", async () => {
  const s = await TestServer.start();
  try {
    const graceMs = 500;
    await s.start("g", ["sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done"]);
    await waitOutput(s, "g", "ready");
    const sentAt = performance.now();
    assert.deepEqual(
      await s.call("process/terminate", { processId: "g", graceMs }),
      { running: true },
    );
    const exited = await s.waitExited("g");
    const elapsed = performance.now() - sentAt;
    assert.equal(exited.params.signal, "SIGKILL");
    assert.equal(exited.params.exitCode, 137);
    assert.ok(elapsed >= graceMs, `exited after ${elapsed} ms, grace was ${graceMs} ms`);
    // Terminating again reports that nothing is running.
    assert.deepEqual(await s.call("process/terminate", { processId: "g" }), { running: false });
  } finally {
    await s.close();
  }
});

Deno.test("terminate graceMs: a child that honours SIGTERM exits by SIGTERM", async () => {
  const s = await TestServer.start();
  try {
    await s.start("t", ["sleep", "30"]);
    assert.deepEqual(
      await s.call("process/terminate", { processId: "t", graceMs: 10_000 }),
      { running: true },
    );
    const exited = await s.waitExited("t", 5_000);
    assert.equal(exited.params.signal, "SIGTERM");
    assert.equal(exited.params.exitCode, 143);
  } finally {
    await s.close();
  }
});

for (const tty of [false, true]) {
  Deno.test(`terminate kills SIGHUP-immune and setsid grandchildren (tty ${tty})`, async () => {
    const s = await TestServer.start();
    const pids: number[] = [];
    try {
      // The nohup'ed child ignores SIGHUP; the setsid'ed one left the
      // session and process group entirely.
      const script = "nohup sleep 300 >/dev/null 2>&1 & echo nohup=$!; " +
        "setsid sleep 301 >/dev/null 2>&1 & echo setsid=$!; echo leader=$$; sleep 302";
      await s.start("tree", ["sh", "-c", script], { tty });
      await waitMatch(s, "tree", /leader=\d+\r?\n/);
      const out = s.outputText("tree");
      const nohupPid = Number(/nohup=(\d+)/.exec(out)![1]);
      const setsidPid = Number(/setsid=(\d+)/.exec(out)![1]);
      const leaderPid = Number(/leader=(\d+)/.exec(out)![1]);
      pids.push(nohupPid, setsidPid, leaderPid);
      // setsid runs in the background job, which is no group leader, so it
      // execs sleep in place: the pid is the escaped sleep itself.
      await eventually(
        async () => (await sessionOf(setsidPid)) === setsidPid,
        5_000,
        `pid ${setsidPid} to lead its own session`,
      );
      assert.notEqual(await sessionOf(leaderPid), setsidPid);
      for (const pid of pids) assert.ok(await isAlive(pid), `pid ${pid} should be running`);

      assert.deepEqual(await s.call("process/terminate", { processId: "tree" }), {
        running: true,
      });
      const exited = await s.waitExited("tree");
      assert.equal(exited.params.signal, "SIGKILL");
      assert.equal(exited.params.exitCode, 137);
      for (const pid of pids) {
        await eventually(async () => !(await isAlive(pid)), 5_000, `pid ${pid} to die`);
      }
    } finally {
      for (const pid of pids) {
        try {
          if (await isAlive(pid)) Deno.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      await s.close();
    }
  });
}

Deno.test("terminate with graceMs reaches grandchildren that left the group", async () => {
  const s = await TestServer.start();
  let escaped = 0;
  try {
    // The escaped grandchild honours SIGTERM and records that it got it.
    // It says "armed" once its trap is set: a SIGTERM before that would
    // kill it by the default action (this raced under load).
    const marker = await Deno.makeTempFile();
    const script = `setsid sh -c 'trap "echo term > ${marker}; exit 0" TERM; ` +
      `echo armed > ${marker}; while :; do sleep 0.05; done' >/dev/null 2>&1 & ` +
      `echo pid=$!; sleep 300`;
    await s.start("gt", ["sh", "-c", script]);
    escaped = Number((await waitMatch(s, "gt", /pid=(\d+)\n/))[1]);
    await eventually(async () => (await sessionOf(escaped)) === escaped, 5_000, "setsid");
    await eventually(
      async () => (await Deno.readTextFile(marker)) === "armed\n",
      5_000,
      "the trap to be set",
    );
    await s.call("process/terminate", { processId: "gt", graceMs: 2_000 });
    const exited = await s.waitExited("gt");
    assert.equal(exited.params.signal, "SIGTERM");
    await eventually(async () => !(await isAlive(escaped)), 5_000, `pid ${escaped} to die`);
    assert.equal(await Deno.readTextFile(marker), "term\n");
    await Deno.remove(marker);
  } finally {
    if (escaped && await isAlive(escaped)) Deno.kill(escaped, "SIGKILL");
    await s.close();
  }
});

Deno.test("process/read after a normal exit reports signal null and durationMs", async () => {
  const s = await TestServer.start();
  try {
    await s.start("n", ["sh", "-c", "echo hi; exit 4"]);
    const exited = await s.waitExited("n");
    assert.equal(exited.params.exitCode, 4);
    assert.equal(exited.params.signal, null);
    const read = await s.call("process/read", { processId: "n" });
    assert.equal(read.exited, true);
    assert.equal(read.exitCode, 4);
    assert.equal(read.signal, null);
    assert.equal(typeof read.durationMs, "number");
    assert.equal(unb64(read.chunks[0].chunk), "hi\n");
    assert.equal(read.chunks[0].seq, 1);
    assert.equal(read.nextSeq, 2);
  } finally {
    await s.close();
  }
});

Deno.test("pty: interrupt reaches the foreground job of a job-control shell", async () => {
  await using s = await TestServer.start();
  // An interactive bash runs each job in a process group of its own and
  // hands it the terminal, as a login shell does.
  await s.start("sh", ["bash", "--norc", "--noprofile", "-i"], {
    tty: true,
    env: { PATH: "/usr/bin:/bin", PS1: "$ " },
  });
  await s.call("process/write", { processId: "sh", chunk: b64("sleep 300\n") });
  let sleepPid = 0;
  await eventually(
    async () => {
      for (const p of await descendants(s.child.pid!)) if (p.comm === "sleep") sleepPid = p.pid;
      return sleepPid !== 0;
    },
    10_000,
    "the sleep job",
  );
  assert.deepEqual(
    await s.call("process/signal", { processId: "sh", signal: "interrupt" }),
    { signal: "SIGINT" },
  );
  await eventually(async () => !(await isAlive(sleepPid)), 10_000, "sleep to die");
  // The shell itself survives Ctrl-C, as on a terminal, and saw its job
  // end by SIGINT.
  await s.call("process/write", { processId: "sh", chunk: b64("echo status=$?\n") });
  await waitOutput(s, "sh", "status=130\r\n");
  await s.call("process/write", { processId: "sh", chunk: b64("exit 0\n") });
  assert.equal((await s.waitExited("sh")).params.exitCode, 0);
});

Deno.test("pty: closeStdin after a partial line sends it, then EOF", async () => {
  await using s = await TestServer.start();
  await s.start("t", ["cat"], { tty: true });
  await s.call("process/write", { processId: "t", chunk: b64("no newline") });
  await waitOutput(s, "t", "no newline");
  await s.call("process/closeStdin", { processId: "t" });
  const exited = await s.waitExited("t");
  assert.equal(exited.params.exitCode, 0);
  // Echoed once by the terminal, then written back by cat.
  assert.equal(s.outputText("t"), "no newlineno newline");
});

Deno.test("exit timing measures the exit, not the wait for a grandchild's pipe", async () => {
  const drainMs = 1500;
  await using s = await TestServer.start(["--exit-drain-ms", String(drainMs)]);
  const sentAt = performance.now();
  // The background sleep keeps stdout open after sh exits.
  await s.start("bg", ["sh", "-c", "sleep 5 & echo started"]);
  const exited = await s.waitExited("bg");
  const observed = performance.now() - sentAt;
  assert.ok(observed >= drainMs, `exited reported after ${observed} ms, drain ${drainMs} ms`);
  assert.equal(exited.params.exitCode, 0);
  assert.equal(s.outputText("bg"), "started\n");
  assert.ok(exited.params.durationMs < drainMs, `durationMs ${exited.params.durationMs}`);
  assert.ok(exited.params.exitedAtMs - exited.params.startedAtMs < drainMs);
});
