import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Lifeline, REAPER_SCRIPT } from "./lifeline.ts";
import { readAllProcStats, readProcStat } from "./proc_stat.ts";

/** Poll `cond` every 20 ms until it holds (or fail after `ms`). */
async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Live (not zombie) pids whose argv[0] is `name`. */
async function pidsNamed(name: string): Promise<number[]> {
  const out: number[] = [];
  for (const s of (await readAllProcStats()) ?? []) {
    if (s.state === "Z") continue;
    try {
      const cmdline = await readFile(`/proc/${s.pid}/cmdline`, "utf8");
      if (cmdline.split("\0")[0] === name) out.push(s.pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** Start `script` under bash as the leader of a new session; its pid once it runs. */
async function leader(script: string): Promise<ChildProcess> {
  const child = spawn("bash", ["-c", script], { detached: true, stdio: "ignore" });
  await new Promise((r) => child.once("spawn", r));
  return child;
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

/** Run the reaper's script on `lines`, then end its input; its stderr once it exited. */
async function runReaper(lines: string[], env?: Record<string, string>): Promise<string> {
  const reaper = spawn("/bin/sh", ["-c", REAPER_SCRIPT], {
    stdio: ["pipe", "ignore", "pipe"],
    env,
  });
  let stderr = "";
  reaper.stderr!.on("data", (d) => stderr += d);
  const exited = new Promise((r) => reaper.once("exit", r));
  reaper.stdin!.end(lines.join("\n") + "\n");
  await exited;
  return stderr;
}

// Without grep the reaper reads /proc itself, more slowly.
for (const grep of [true, false]) {
  Deno.test(`the reaper kills listed groups, their sessions and descendants, and nothing else (grep: ${grep})`, async () => {
    await reaperScenario(grep ? undefined : { PATH: "/nonexistent" });
  });
}

/** Seven leaders, each listed (or not) in its own way; which survive the reaper. */
async function reaperScenario(env: Record<string, string> | undefined): Promise<void> {
  const m = `lifeline-test-${process.pid}-${Date.now()}`;
  const pair = (n: string) => `(exec -a ${m}-${n}-bg sleep 300) & exec -a ${m}-${n} sleep 300`;
  // Listed: with a child in its group and one that escaped into a new session.
  const a = await leader(`setsid bash -c 'exec -a ${m}-a-esc sleep 300' & ${pair("a")}`);
  // Listed, then forgotten.
  const b = await leader(pair("b"));
  // Listed as an exited leader's group whose witness is still in it.
  const c = await leader(pair("c"));
  // Listed likewise, but the witness's start time is not its own: another group.
  const d = await leader(pair("d"));
  // Never listed.
  const e = await leader(pair("e"));
  // Listed by the pid of its child, which leads nothing: a pid that is not
  // (or no longer) the leader it was said to be.
  const f = await leader(pair("f"));
  // Listed after its leader exited, leaving a child in its group.
  const g = await leader(`(exec -a ${m}-g-bg sleep 300) & exit 0`);
  const killed = ["a", "a-bg", "a-esc", "c", "c-bg", "g-bg"].map((n) => `${m}-${n}`);
  const spared = ["b", "b-bg", "d", "d-bg", "e", "e-bg", "f", "f-bg"].map((n) => `${m}-${n}`);
  try {
    await until(async () => {
      for (const n of [...killed, ...spared]) if ((await pidsNamed(n)).length === 0) return false;
      return true;
    }, "every process");
    const cStart = (await readProcStat(c.pid!))!.startTime;
    const [fChild] = await pidsNamed(`${m}-f-bg`);
    await until(async () => (await readProcStat(g.pid!)) === undefined, "g's leader to go");
    const stderr = await runReaper([
      `+${a.pid}`,
      `+${b.pid}`,
      `-${b.pid}`,
      `=${c.pid} ${c.pid}:${cStart}`,
      `=${d.pid} ${d.pid}:1${cStart}`,
      `+${fChild}`,
      `+${g.pid}`,
      "garbage",
      "+",
    ], env);
    assert.equal(stderr, "");
    for (const n of killed) assert.deepEqual(await pidsNamed(n), [], `${n} survived`);
    for (const n of spared) assert.equal((await pidsNamed(n)).length, 1, `${n} was killed`);
  } finally {
    for (const n of [...killed, ...spared]) killAll(await pidsNamed(n));
    for (const child of [a, b, c, d, e, f, g]) child.unref();
  }
}

Deno.test("the lifeline tells the reaper every change, and a new reaper everything", async () => {
  const dir = await mkdtemp(join(tmpdir(), "lifeline-test-"));
  const log = join(dir, "lines");
  // A stand-in for the shell that records what the reaper would read.
  const shell = join(dir, "recorder");
  await writeFile(shell, `#!/bin/sh\nexec cat >> '${log}'\n`);
  await chmod(shell, 0o755);
  const problems: string[] = [];
  const lifeline = new Lifeline({
    shell,
    onProblem: (message) => problems.push(message),
    restartBackoffMs: 0,
  });
  const text = () => readFile(log, "utf8").catch(() => "");
  try {
    lifeline.track(101);
    lifeline.forget(101);
    lifeline.forget(101); // once is enough
    lifeline.track(102);
    lifeline.leftovers({ pgid: 102, members: [{ pid: 103, start: "77" }] });
    lifeline.track(104);
    const told = "+101\n-101\n+102\n=102 103:77\n+104\n";
    await until(async () => (await text()) === told, "the lines");
    const first = lifeline.reaperPid!;
    process.kill(first, "SIGKILL");
    // The new reaper is told what is listed now.
    await until(async () => (await text()) === told + "=102 103:77\n+104\n", "the replay");
    assert.notEqual(lifeline.reaperPid, first);
    assert.match(problems.join("\n"), new RegExp(`reaper \\(pid ${first}\\) exited \\(SIGKILL\\)`));
    const second = lifeline.reaperPid!;
    lifeline.close();
    const gone = async () => ((await readProcStat(second))?.state ?? "Z") === "Z";
    await until(gone, "the reaper's exit");
  } finally {
    lifeline.close();
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("the lifeline forgets a left-behind group once it has emptied", async () => {
  const dir = await mkdtemp(join(tmpdir(), "lifeline-test-"));
  const log = join(dir, "lines");
  const shell = join(dir, "recorder");
  await writeFile(shell, `#!/bin/sh\nexec cat >> '${log}'\n`);
  await chmod(shell, 0o755);
  const lifeline = new Lifeline({ shell, pruneMs: 20 });
  const text = () => readFile(log, "utf8").catch(() => "");
  // One group whose witness lives on, and one whose witness is gone.
  const live = await leader("exec sleep 300");
  const start = (await readProcStat(live.pid!))!.startTime;
  try {
    lifeline.leftovers({ pgid: live.pid!, members: [{ pid: live.pid!, start }] });
    lifeline.leftovers({ pgid: 4_000_000, members: [{ pid: 4_000_000, start: "1" }] });
    const want = `=${live.pid} ${live.pid}:${start}\n=4000000 4000000:1\n-4000000\n`;
    await until(async () => (await text()) === want, "the forget");
  } finally {
    lifeline.close();
    killAll([live.pid!]);
    live.unref();
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("a lifeline whose shell cannot start says so and stays off", async () => {
  const problems: string[] = [];
  const lifeline = new Lifeline({
    shell: "/nonexistent/sh",
    onProblem: (message) => problems.push(message),
  });
  lifeline.track(101);
  await until(() => problems.length > 0, "the problem");
  assert.match(problems[0], /cannot start the reaper \(\/nonexistent\/sh\)/);
  lifeline.track(102);
  assert.equal(lifeline.reaperPid, undefined);
  assert.throws(() => lifeline.track(0), /0 is not a process group id/);
  lifeline.close();
});
