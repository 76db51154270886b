/**
 * Running the build's tools: a command whose failure carries its output,
 * and whether a tool is installed.
 *
 * @module
 */
import { spawnSync } from "node:child_process";

/** Run a command; throw with its output when it fails. */
export function run(cmd: string, args: string[], what: string, cwd?: string): string {
  const res = spawnSync(cmd, args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 600_000,
    maxBuffer: 64 << 20,
  });
  if (res.error) throw new Error(`${what}: could not run ${cmd}: ${res.error.message}`);
  if (res.status !== 0) {
    throw new Error(
      `${what}: ${cmd} ${args.join(" ")} exited with ${
        res.status ?? res.signal
      }\n${res.stdout}${res.stderr}`,
    );
  }
  return res.stdout;
}

/** Whether `name` is on PATH. */
export function onPath(name: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${name}`]).status === 0;
}
