/**
 * No lost output, as a matrix: {pipe, PTY} × three ways a process tree can
 * end × {1, 8, 32} processes at once × {Deno source, Node build}, ten rounds
 * each. Every byte the leader wrote must arrive before its
 * `process/exited`, and nothing after it.
 *
 * The cases where a background child outlives the leader end by the fence
 * (PTY) or by silence (pipes); the drain period is shortened so that each
 * round is quick, which makes the race that once lost PTY output (a timer
 * firing before the event loop read the terminal) more likely, not less.
 *
 * Each runtime has a test file of its own (no_loss_matrix_{deno,node}_test.ts),
 * so that the parallel runner can spread them. The Node half needs
 * `npm/esm/cli.js`; `deno task test` builds it first.
 */
import assert from "node:assert/strict";
import { type Msg, TestServer } from "./harness.ts";

const ROUNDS = 10;
const CONCURRENCY = [1, 8, 32];
const LINES = 3000;
const SEQ = `seq 1 ${LINES}`;

/** How the tree ends; each command prints 1..LINES on its output, once. */
const CASES: [string, string][] = [
  // The leader exits while a child still holds the terminal or the pipes.
  ["leader exits first, a background child holds the output", `(sleep 0.1) & ${SEQ}`],
  // Every child is done before the leader.
  ["leader exits last", `(seq 1 1500) & wait $!; seq 1501 ${LINES}`],
  // A child inherits the output, closes it and lives on while the leader writes.
  [
    "a child inherits the output and closes it early",
    `(exec >&- 2>&- </dev/null; sleep 0.1) & ${SEQ}; wait`,
  ],
];

const EXPECTED = Array.from({ length: LINES }, (_, i) => `${i + 1}\n`).join("");

function checkOne(s: TestServer, id: string, tty: boolean, started: Msg, exited: Msg): void {
  assert.equal(exited.params.exitCode, 0, `${id}: exit code`);
  const text = s.outputText(id);
  const got = tty ? text.replaceAll("\r\n", "\n") : text;
  assert.equal(got.length, EXPECTED.length, `${id}: got ${got.length} of ${EXPECTED.length} bytes`);
  assert.equal(got, EXPECTED, `${id}: output differs`);
  const outputs = s.outputsOf(id);
  const exitedAt = s.messages.indexOf(exited);
  assert.ok(outputs.every((m) => s.messages.indexOf(m) < exitedAt), `${id}: output after exited`);
  assert.ok(s.messages.indexOf(started) < s.messages.indexOf(outputs[0]), `${id}: output first`);
}

async function round(s: TestServer, prefix: string, cmd: string, tty: boolean, n: number) {
  const ids = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const started = await Promise.all(ids.map((id) => s.start(id, ["sh", "-c", cmd], { tty })));
  started.forEach((res, i) => assert.deepEqual(res.result, { processId: ids[i] }));
  const exited = await Promise.all(ids.map((id) => s.waitExited(id, 30_000)));
  ids.forEach((id, i) => checkOne(s, id, tty, started[i], exited[i]));
}

/** Register the matrix and the reported reproduction for one runtime. */
export function defineNoLossTests(name: string, command: () => string[]): void {
  for (const tty of [false, true]) {
    Deno.test(`no lost output matrix (${name}, ${tty ? "pty" : "pipe"})`, async (t) => {
      await using s = await TestServer.start(["--exit-drain-ms", "50"], { command: command() });
      let k = 0;
      for (const [what, cmd] of CASES) {
        for (const n of CONCURRENCY) {
          await t.step(`${what}, ${n} at once, ${ROUNDS} rounds`, async () => {
            for (let r = 0; r < ROUNDS; r++) await round(s, `c${k}-${n}-${r}`, cmd, tty, n);
          });
        }
        k++;
      }
      assert.deepEqual(s.badLines, []);
    });
  }

  Deno.test(`no lost output: the reported PTY reproduction, 8 and 16 at once (${name})`, async () => {
    // Default flags, the command from the report: the leader exits while a
    // background child still holds the terminal.
    await using s = await TestServer.start([], { command: command() });
    const cmd = "echo a; echo b >&2; (sleep 0.05; echo late) & echo c";
    for (const n of [8, 16]) {
      for (let r = 0; r < ROUNDS; r++) {
        const ids = Array.from({ length: n }, (_, i) => `r${n}-${r}-${i}`);
        await Promise.all(ids.map((id) => s.start(id, ["sh", "-c", cmd], { tty: true })));
        await Promise.all(ids.map((id) => s.waitExited(id)));
        for (const id of ids) {
          // "late" comes after the leader's exit and may or may not be included.
          assert.match(s.outputText(id), /^a\r\nb\r\nc\r\n(late\r\n)?$/, `${id} lost output`);
        }
      }
    }
  });
}
