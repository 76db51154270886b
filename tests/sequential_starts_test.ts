/**
 * An agent runs one short command after another on one connection. With the
 * default flags, 2,000 of them all start (the process limit counts running
 * processes only), and the server's descriptors and memory come back to
 * where they were: exited processes are kept within their own bounds.
 *
 * The baseline is taken after a warm-up of as many commands, idle: the
 * first thousands of spawns grow the runtime's heap to its working size
 * once (Deno: 50 to ~80 MiB), and what this test guards against is memory
 * that grows with every command, i.e. a leak.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { denoServerCommand, nodeServerCommand, TestServer } from "./harness.ts";

const COMMANDS = 2000;
/** Commands run before the baseline, so the heap has its working size. */
const WARMUP = 2000;
/** Longer than the server's idle collector waits (1 s) before it collects. */
const IDLE_MS = 1600;

async function fdCount(pid: number): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`)).length;
}

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
}

async function runSequence(s: TestServer, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const id = `${prefix}-${i}`;
    // Alternate pipes and terminals: both must give back what they took.
    const res = await s.start(id, ["echo", String(i)], { tty: i % 2 === 1 });
    assert.deepEqual(res.result, { processId: id }, JSON.stringify(res));
    const exited = await s.waitExited(id);
    assert.equal(exited.params.exitCode, 0);
    assert.equal(s.outputText(id).trim(), String(i));
  }
  // Keep the harness's own record small: it is not the server's memory.
  s.messages.length = 0;
}

/**
 * How much RSS may grow over the baseline. Deno comes back to it (measured
 * 0.99 to 1.005 of it). Node keeps more of what the allocator once held:
 * after the idle collection its RSS ended 1.04 to 1.06 of the baseline on
 * a quiet machine and up to 1.12 while the rest of the suite ran, with
 * descriptors exactly back; its bound is wider for that reason alone.
 */
const runtimes: [string, () => string[], number][] = [
  ["deno", denoServerCommand, 1.1],
  ["node", nodeServerCommand, 1.25],
];

for (const [name, command, rssBound] of runtimes) {
  Deno.test(`${COMMANDS} sequential commands on one connection, default flags (${name})`, async () => {
    await using s = await TestServer.start([], { command: command() });
    const pid = s.child.pid!;
    await runSequence(s, "warm", WARMUP);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const fds0 = await fdCount(pid);
    const rss0 = await rssKiB(pid);
    await runSequence(s, "run", COMMANDS);
    // The last exits are still being read out; their descriptors close as
    // their ends are seen.
    let fds = await fdCount(pid);
    for (let i = 0; i < 100 && fds > fds0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      fds = await fdCount(pid);
    }
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const rss = await rssKiB(pid);
    console.log(`${name}: fds ${fds0} -> ${fds}, RSS ${rss0} -> ${rss} KiB`);
    assert.ok(fds <= fds0, `descriptors grew from ${fds0} to ${fds}`);
    assert.ok(rss <= rss0 * rssBound, `RSS grew from ${rss0} to ${rss} KiB (bound ×${rssBound})`);
    // The oldest exits were dropped, the newest are readable.
    const old = await s.request("process/read", { processId: "run-0" });
    assert.equal(old.error?.code, -32600);
    const last = await s.call("process/read", { processId: `run-${COMMANDS - 1}` });
    assert.equal(last.exited, true);
  });
}
