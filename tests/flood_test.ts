/**
 * Flow control end to end: a client that stops reading while `yes` floods
 * a pipe and a PTY. The server must stop reading its children instead of
 * buffering without bound, and lose nothing once the client reads again.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { descendants, type Msg, TestServer, unb64Bytes } from "./harness.ts";

const MIB = 1024 * 1024;
/** How long the client stops reading. */
const PAUSE_MS = 5_000;
/** How long the client reads again before the processes are terminated. */
const RESUME_MS = 1_500;
/**
 * The most the server's RSS may grow while the client is stalled, over its
 * RSS just before. Queued output is capped by the 4 MiB high-water mark
 * (plus the batch being written and 1 MiB retained per process), so a
 * working server stays far below this; one that kept reading `yes` would
 * pass it within a second.
 */
const PAUSE_GROWTH_BOUND = 64 * MIB;
/**
 * An absolute sanity bound over the idle baseline. Streaming at full speed
 * makes the garbage collector grow its heap well beyond the live data
 * (about 300 MiB under Deno), which is not buffering; 5 s of unthrottled
 * `yes` would be gigabytes.
 */
const ABSOLUTE_GROWTH_BOUND = 512 * MIB;

/** Bytes written so far by `pid`, from /proc/PID/io. */
async function bytesWritten(pid: number): Promise<number> {
  const io = await readFile(`/proc/${pid}/io`, "utf8");
  return Number(/^wchar:\s+(\d+)$/m.exec(io)![1]);
}

/** The resident set size of `pid`, in bytes, from /proc/PID/status. */
async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  assert.ok(m, `no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Checks one process's output as it arrives: seqs 1, 2, 3, ... without a
 * gap, bytes repeating `pattern` from the first, nothing after the exit.
 */
class OutputCheck {
  readonly id: string;
  readonly stream: string;
  #pattern: Uint8Array;
  nextSeq = 1;
  bytes = 0;
  exit: Msg | undefined;

  constructor(id: string, stream: string, pattern: string) {
    this.id = id;
    this.stream = stream;
    this.#pattern = new TextEncoder().encode(pattern);
  }

  output(params: Msg): void {
    assert.equal(this.exit, undefined, `${this.id}: output after process/exited`);
    assert.equal(params.stream, this.stream, `${this.id}: stream`);
    assert.equal(params.seq, this.nextSeq, `${this.id}: seq after ${this.nextSeq - 1}`);
    this.nextSeq++;
    const data = unb64Bytes(params.chunk);
    const p = this.#pattern;
    let at = this.bytes % p.length;
    for (let i = 0; i < data.length; i++) {
      if (data[i] !== p[at]) {
        assert.fail(`${this.id}: byte ${this.bytes + i} is ${data[i]}, expected ${p[at]}`);
      }
      if (++at === p.length) at = 0;
    }
    this.bytes += data.length;
  }
}

/**
 * Feed every received notification to its check, then drop the messages
 * so the test's own memory stays flat. Only called while no request waits
 * for a response.
 */
function consume(s: TestServer, checks: Map<string, OutputCheck>): void {
  const n = s.messages.length;
  for (let i = 0; i < n; i++) {
    const m = s.messages[i];
    const check = checks.get(m.params?.processId);
    if (!check) continue;
    if (m.method === "process/output") check.output(m.params);
    else if (m.method === "process/exited") check.exit = m;
  }
  s.messages.splice(0, n);
}

Deno.test("flood: a stalled client bounds server memory and loses nothing", async () => {
  await using s = await TestServer.start(["--log-level", "debug"]);
  const serverPid = s.child.pid!;
  const checks = new Map([
    ["pipe", new OutputCheck("pipe", "stdout", "y\n")],
    ["pty", new OutputCheck("pty", "pty", "y\r\n")],
  ]);
  try {
    const baseline = await rssBytes(serverPid);
    assert.equal((await s.start("pipe", ["yes"])).result?.processId, "pipe");
    assert.equal((await s.start("pty", ["yes"], { tty: true })).result?.processId, "pty");

    // Let both run at full speed for a moment.
    const warm = Date.now() + 10_000;
    while ([...checks.values()].some((c) => c.bytes < MIB) && Date.now() < warm) {
      consume(s, checks);
      await sleep(20);
    }
    consume(s, checks);
    for (const c of checks.values()) assert.ok(c.bytes >= MIB, `${c.id} produced ${c.bytes} B`);

    const yesPids = (await descendants(serverPid)).filter((p) => p.comm === "yes").map((p) =>
      p.pid
    );
    assert.equal(yesPids.length, 2, "both yes processes run");

    const beforePause = await rssBytes(serverPid);
    s.pauseReading();
    const samples: number[] = [];
    const pauseEnd = Date.now() + PAUSE_MS;
    let writtenMidPause: number[] = [];
    while (Date.now() < pauseEnd) {
      await sleep(250);
      samples.push(await rssBytes(serverPid));
      if (samples.length === 8) writtenMidPause = await Promise.all(yesPids.map(bytesWritten));
    }
    const atPauseEnd = samples[samples.length - 1];
    const peak = Math.max(...samples);
    // The server stopped reading: both children are blocked in write().
    assert.deepEqual(await Promise.all(yesPids.map(bytesWritten)), writtenMidPause);
    const bytesAtPause = new Map([...checks].map(([id, c]) => [id, c.bytes]));
    assert.match(s.stderr, /pausing process output/, "flow control never engaged");

    s.resumeReading();
    const resumeEnd = Date.now() + RESUME_MS;
    while (Date.now() < resumeEnd) {
      consume(s, checks);
      await sleep(20);
    }
    consume(s, checks);
    const afterResume = await rssBytes(serverPid);
    assert.match(s.stderr, /resuming process output/);

    for (const id of checks.keys()) {
      assert.deepEqual(await s.call("process/terminate", { processId: id }), { running: true });
    }
    await s.waitExited("pipe", 20_000);
    await s.waitExited("pty", 20_000);
    consume(s, checks);

    const mib = (n: number) => `${(n / MIB).toFixed(1)} MiB`;
    const report = `server RSS: idle ${mib(baseline)}, before pause ${mib(beforePause)}, ` +
      `pause peak ${mib(peak)}, ` +
      `pause end ${mib(atPauseEnd)}, after resume ${mib(afterResume)}; ` +
      [...checks.values()].map((c) =>
        `${c.id}: ${mib(c.bytes)} in ${c.nextSeq - 1} chunks ` +
        `(${mib(c.bytes - bytesAtPause.get(c.id)!)} after the pause)`
      ).join(", ");
    console.log(report);
    assert.ok(peak < beforePause + PAUSE_GROWTH_BOUND, `RSS grew while paused: ${report}`);
    assert.ok(peak < baseline + ABSOLUTE_GROWTH_BOUND, `RSS too large: ${report}`);

    for (const c of checks.values()) {
      assert.ok(c.exit, `${c.id}: no process/exited`);
      assert.equal(c.exit.params.signal, "SIGKILL");
      assert.equal(c.exit.params.exitCode, 137);
      // Reading resumed: output kept flowing beyond what was queued before.
      assert.ok(c.bytes > bytesAtPause.get(c.id)!, `${c.id}: no output after resuming`);
    }
  } finally {
    s.resumeReading();
    s.messages.splice(0, s.messages.length);
  }
});
