/**
 * Run by pty_hazards_test.ts inside a private pid namespace (as its pid 1):
 * a process that exited is retained by the server; another process then
 * gets its pid and has a child; closing the connection must kill neither,
 * and with `kill`, neither must SIGKILL to the server (its reaper runs).
 *
 * Usage: unshare --pid --fork --mount-proc deno run -A pid_reuse_scenario.ts '["cmd", ...]' [kill]
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import process from "node:process";
import { eventually, isAlive, pidsByArgv0, TestServer } from "./harness.ts";

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // Gone.
  }
}

const command: string[] = JSON.parse(process.argv[2] ?? Deno.args[0]);
const kill = (process.argv[3] ?? Deno.args[1]) === "kill";
const s = await TestServer.start([], { command });
await s.start("short", ["sh", "-c", "echo $$"]);
await s.waitExited("short");
const pid = Number(s.outputText("short").trim());
// Another user's process gets the retained pid, and has a child. In this
// namespace nothing else starts processes, so the first attempt succeeds.
writeFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
const other = spawn("sh", ["-c", "sleep 1000 & echo $!; wait"], {
  stdio: ["ignore", "pipe", "ignore"],
  detached: true,
});
try {
  assert.equal(other.pid, pid, "could not reuse the pid");
  const child = await new Promise<number>((resolve) =>
    other.stdout!.once("data", (d: Uint8Array) => resolve(Number(String(d).trim())))
  );
  assert.equal(await isAlive(child), true);
  if (kill) {
    // The namespace holds one server, so one reaper.
    const [reaper] = await pidsByArgv0("exec-server-reaper");
    assert.ok(reaper, "the server has no reaper");
    s.kill();
    await eventually(async () => !(await isAlive(reaper)), 5000, "the reaper's sweep");
  } else {
    await s.close(); // closeAll() runs for the retained process
    await new Promise((r) => setTimeout(r, 300));
  }
  assert.equal(await isAlive(child), true, "an unrelated process's child was killed");
  assert.equal(await isAlive(pid), true, "an unrelated process was killed");
  console.log("scenario passed");
} finally {
  if (other.pid) killGroup(other.pid);
}
process.exit(0);
