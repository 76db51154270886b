/**
 * Terminal situations that once froze or misled the server: a child that
 * stops its terminal's output, a busy PTY killed mid-stream, input nobody
 * reads, and a reaped pid that now belongs to someone else. Each runs on
 * both runtimes.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { b64, denoServerCommand, nodeServerCommand, TestServer } from "./harness.ts";
import { canSteerPids, runPidScenario } from "./pid_scenario_fixture.ts";

const runtimes: [string, () => string[]][] = [
  ["deno", denoServerCommand],
  ["node", nodeServerCommand],
];

/** Resolves with the answer, or "no answer" after `ms`. */
async function answered(s: TestServer, ms = 3000): Promise<string> {
  const res = await s.request("fs/getMetadata", { path: "/tmp" }, ms).catch(() => undefined);
  return res?.result ? "answered" : "no answer";
}

const hasPython = existsSync("/usr/bin/python3");

for (const [name, command] of runtimes) {
  Deno.test({
    name: `pty (${name}): a child that stops terminal output still exits, server keeps serving`,
    ignore: !hasPython,
    fn: async () => {
      await using s = await TestServer.start([], { command: command() });
      // tcflow(TCOOFF) is what ^S does: writes into the terminal then block,
      // the server's end marker included.
      await s.start("stopped", [
        "python3",
        "-c",
        "import termios; print('bye', flush=True); termios.tcflow(1, termios.TCOOFF)",
      ], { tty: true });
      const exited = await s.waitExited("stopped", 10_000);
      assert.equal(exited.params.exitCode, 0);
      assert.equal(s.outputText("stopped"), "bye\r\n");
      assert.equal(await answered(s), "answered");
    },
  });

  Deno.test(`pty (${name}): terminating a busy terminal, again and again`, async () => {
    await using s = await TestServer.start([], { command: command() });
    for (let round = 0; round < 6; round++) {
      const id = `yes-${round}`;
      await s.start(id, ["yes"], { tty: true });
      await s.waitFor((m) => m.method === "process/output" && m.params.processId === id);
      const res = await s.request("process/terminate", { processId: id });
      assert.deepEqual(res.result, { running: true });
      const exited = await s.waitExited(id, 10_000);
      assert.equal(exited.params.signal, "SIGKILL");
    }
    assert.equal(await answered(s), "answered");
  });

  Deno.test(`pty (${name}): input the child never reads neither stalls the server nor hangs`, async () => {
    await using s = await TestServer.start([], { command: command() });
    await s.start("sleeper", ["sleep", "100"], { tty: true });
    // Far more than the terminal's input buffer holds.
    const id = s.newId();
    s.send({
      id,
      method: "process/write",
      params: { processId: "sleeper", chunk: b64("x\n".repeat(100_000)) },
    });
    assert.equal(await answered(s), "answered");
    await s.request("process/terminate", { processId: "sleeper" });
    await s.waitExited("sleeper");
    const write = await s.response(id);
    assert.equal(write.error?.code, -32600, JSON.stringify(write));
    assert.match(write.error.message, /stdin of process sleeper is closed/);
  });
}

for (const [name, command] of runtimes) {
  Deno.test(`pty (${name}): a paste far larger than the terminal's buffer arrives whole`, async () => {
    await using s = await TestServer.start([], { command: command() });
    // Raw mode, no echo: the child counts exactly the bytes written. The
    // first part of the write goes out at once, the rest as the child reads.
    await s.start("count", ["sh", "-c", "stty raw -echo; head -c 200000 | wc -c"], { tty: true });
    await new Promise((r) => setTimeout(r, 200));
    const write = await s.request("process/write", {
      processId: "count",
      chunk: b64("0123456789".repeat(20_000)),
    });
    assert.equal(write.error, undefined, JSON.stringify(write));
    await s.waitExited("count");
    assert.match(s.outputText("count"), /\b200000\b/);
  });
}

for (const [name, command] of runtimes) {
  Deno.test({
    name: `pids (${name}): a retained process's reused pid is not killed at disconnect`,
    ignore: !canSteerPids(),
    fn: async () => {
      // The whole scenario, server included, runs in a private pid
      // namespace: no other process can take the pid it steers towards.
      // (Steered in the open, the shared pid counter raced the parallel
      // suite: "could not reuse the pid (another process took it)".)
      await runPidScenario(command());
    },
  });
}
