/**
 * No lost output: a process that prints 64 KiB and exits at once must have
 * every byte delivered before its `process/exited`, on pipes and on a PTY,
 * under both runtimes (Deno from source, Node from the npm build).
 *
 * The Node half needs `npm/esm/cli.js`; `deno task test` builds it first
 * (or run `npx deno task build:npm`).
 */
import assert from "node:assert/strict";
import { denoServerCommand, nodeServerCommand, TestServer } from "./harness.ts";

const BYTES = 65536;
const RUNS = 200;
/** Processes in flight at once: enough to overlap, few enough for 2 cores. */
const CONCURRENCY = 8;

async function runOne(s: TestServer, id: string, tty: boolean): Promise<void> {
  const res = await s.start(id, ["head", "-c", String(BYTES), "/dev/zero"], { tty });
  assert.deepEqual(res.result, { processId: id }, JSON.stringify(res));
  const exited = await s.waitExited(id, 30_000);
  assert.equal(exited.params.exitCode, 0, `${id} exit code`);
  const outputs = s.outputsOf(id);
  const bytes = s.outputBytes(id);
  assert.equal(bytes.length, BYTES, `${id}: got ${bytes.length} of ${BYTES} bytes`);
  assert.ok(bytes.every((b) => b === 0), `${id}: corrupted bytes`);
  const exitedAt = s.messages.indexOf(exited);
  assert.ok(
    outputs.every((m) => s.messages.indexOf(m) < exitedAt),
    `${id}: output after process/exited`,
  );
  assert.ok(
    s.messages.indexOf(res) < s.messages.indexOf(outputs[0]),
    `${id}: output before the start response`,
  );
}

async function runMany(s: TestServer, prefix: string, tty: boolean): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < RUNS) {
      const i = next++;
      await runOne(s, `${prefix}-${i}`, tty);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

const runtimes: [string, () => string[]][] = [
  ["deno (cli.ts)", denoServerCommand],
  ["node (npm/esm/cli.js)", nodeServerCommand],
];

for (const [name, command] of runtimes) {
  Deno.test(`no lost output: ${RUNS} pipe + ${RUNS} pty runs of 64 KiB on ${name}`, async () => {
    // Resolving the command fails clearly when the Node build is missing.
    // 400 processes on one connection: exited ones must not fill the table.
    await using s = await TestServer.start(["--max-processes", "1024"], { command: command() });
    await runMany(s, "pipe", false);
    await runMany(s, "pty", true);
    assert.deepEqual(s.badLines, []);
    assert.equal((await s.close()).code, 0);
  });
}
