import assert from "node:assert/strict";
import { SpawnFailedError, startControlled } from "./controller.ts";

const quiet = { drainQuietMs: 50, onOutput: () => {} };
const env = { PATH: "/usr/bin:/bin" };

Deno.test("controller: a TERM-ignoring child gets SIGKILL after the grace", async () => {
  const p = await startControlled(
    { argv: ["sh", "-c", "trap '' TERM; sleep 30"], cwd: "/", env, tty: false },
    quiet,
  );
  await new Promise((r) => setTimeout(r, 100));
  const began = performance.now();
  await p.kill(150);
  const exit = await p.finished;
  assert.equal(exit.signal, "SIGKILL");
  assert.equal(exit.exitCode, 137);
  assert.ok(performance.now() - began >= 140, "killed before the grace ended");
  assert.equal(p.running, false);
  assert.ok(exit.durationMs > 0 && exit.exitedAtMs <= Date.now());
});

Deno.test("controller: a missing program is a SpawnFailedError with errno", async () => {
  await assert.rejects(
    startControlled({ argv: ["no-such-program-x"], cwd: "/", env, tty: false }, quiet),
    (err: unknown) => err instanceof SpawnFailedError && err.errno === "ENOENT",
  );
});
