/**
 * Cold start side by side: how long each server takes from its spawn to
 * its answer to `initialize`, median of `--runs` runs (default 20), the
 * commands alternating so that a noisy machine slows all of them alike.
 * The Codex CLI's `initialize` is sent, which this server and the upstream
 * `codex exec-server --listen stdio` both answer.
 *
 * ```sh
 * deno run -A scripts/cold_start.ts --cmd "dist/exec-server" \
 *   --cmd "codex exec-server --listen stdio" [--runs 20]
 * ```
 *
 * @module
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { parseArgs } from "node:util";

const INITIALIZE = JSON.stringify({
  id: 1,
  method: "initialize",
  params: { clientName: "cold-start", resumeSessionId: null },
}) + "\n";

/** One start: ms from spawn to the first line of the answer. */
function once(cmd: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(cmd[0], cmd.slice(1), {
    stdio: ["pipe", "pipe", "ignore"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/" },
  });
  child.stdin!.write(INITIALIZE);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      if (!out.includes("\n")) return;
      const ms = performance.now() - started;
      child.kill("SIGKILL");
      if (!out.includes('"result"')) {
        reject(new Error(`${cmd.join(" ")} answered ${out.slice(0, 200)}`));
      } else resolve(ms);
    });
    child.on("error", reject);
    child.on("exit", () => {
      if (!out.includes("\n")) reject(new Error(`${cmd.join(" ")} exited without answering`));
    });
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (import.meta.main) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { cmd: { type: "string", multiple: true }, runs: { type: "string", default: "20" } },
  });
  const cmds = (values.cmd ?? []).map((c) => c.split(" ").filter(Boolean));
  if (cmds.length === 0) {
    console.error('usage: cold_start.ts --cmd "SERVER ARGS" [--cmd ...] [--runs N]');
    process.exit(2);
  }
  const runs = Number(values.runs);
  const times: number[][] = cmds.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [k, cmd] of cmds.entries()) times[k].push(await once(cmd));
  }
  const base = median(times[0]);
  for (const [k, cmd] of cmds.entries()) {
    const m = median(times[k]);
    console.log(
      `${m.toFixed(1).padStart(7)} ms  (${(m / base).toFixed(2)}x the first)  ${cmd.join(" ")}`,
    );
  }
}
