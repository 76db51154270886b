/**
 * Running tests/pid_reuse_scenario.ts in a private pid namespace (root and
 * `unshare` needed), where no other process can take the pid it steers
 * towards; shared by the disconnect and the server-SIGKILL cases.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import process from "node:process";

const SCENARIO = new URL("./pid_reuse_scenario.ts", import.meta.url).pathname;

/** Whether this machine can run the scenario: root with `unshare`. */
export function canSteerPids(): boolean {
  return process.getuid?.() === 0 && existsSync("/usr/bin/unshare");
}

/**
 * Run the scenario against `serverCommand` (`mode` as the scenario takes
 * it, e.g. `"kill"`) and fail unless it passed.
 */
export async function runPidScenario(serverCommand: string[], mode?: string): Promise<void> {
  const child = spawn("/usr/bin/unshare", [
    "--pid",
    "--fork",
    "--mount-proc",
    process.execPath,
    "run",
    "-A",
    SCENARIO,
    JSON.stringify(serverCommand),
    ...(mode ? [mode] : []),
  ], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => out += d);
  child.stderr!.on("data", (d) => out += d);
  const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  assert.equal(code, 0, `the scenario failed:\n${out}`);
  assert.match(out, /scenario passed/);
}
