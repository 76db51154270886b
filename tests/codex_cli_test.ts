/**
 * The real Codex CLI 0.171 running its tools through this server, with a
 * local mock of the model and `include_local = false`, so that nothing
 * can silently run on the CLI's own machine. Each case is judged by what
 * is on disk and by the tool output the mock model received.
 *
 * Skipped, with the reason, when the CLI is not installed (`.ci/run`
 * installs it into ~/.cache/exec-server-ci/codex).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  codexBinary,
  codexHome,
  type EnvironmentEntry,
  MockModel,
  Relay,
  runCodex,
  startTokenServer,
  type Step,
  workspace,
} from "./codex_cli_fixture.ts";
import { DIST_BINARY, ensureBinary } from "./binary_fixture.ts";
import { serverCommand } from "./harness.ts";
import { sshdMissingReason, startSshd } from "./ssh_fixture.ts";
import { bwrapMissing } from "./sandbox_fixture.ts";
import { shellQuote } from "../mod.ts";
import type { WsServer } from "./ws_fixture.ts";

const codex = codexBinary();
if (!codex) {
  console.error(
    "codex CLI tests skipped: no codex binary (npm install --prefix ~/.cache/exec-server-ci/codex " +
      "@openai/codex@0.171.0; .ci/run does this)",
  );
}

/** Run `steps` through the CLI against `env`; returns the model's view and the run. */
async function drive(steps: Step[], env: EnvironmentEntry, cwd: string, sandbox?: string) {
  const model = await new MockModel(steps).start();
  const home = await codexHome(model, env);
  try {
    const run = await runCodex(home, cwd, "do the task", sandbox);
    return { run, outputs: model.toolOutputs(), model };
  } finally {
    await model.close();
  }
}

/** A websocket server with a token file, for the CLI's auth_bearer_token. */
async function tokenServer(
  cmd: string[],
  extra: string[] = [],
): Promise<[WsServer, string, () => Promise<void>]> {
  if (cmd[0] === DIST_BINARY) await ensureBinary();
  const token = "codex-test-token-0123456789abcdef";
  const [server, stop] = await startTokenServer(token, ["--log-level", "debug", ...extra], cmd);
  return [server, token, stop];
}

const PATCH = [
  "apply_patch <<'PATCH'",
  "*** Begin Patch",
  "*** Add File: added.txt",
  "+first",
  "*** Add File: deep/er/nested.txt",
  "+nested",
  "*** Update File: existing.txt",
  "@@",
  "-old line",
  "+new line",
  "*** Delete File: doomed.txt",
  "*** Update File: mover.txt",
  "*** Move to: moved/mover.txt",
  "@@",
  " keep",
  "*** End Patch",
  "PATCH",
].join("\n");

/** The builds the CLI is run against: the source under Deno, and the binary. */
const builds: [string, () => string[]][] = [
  ["source", serverCommand],
  ["binary", () => [DIST_BINARY]],
];

for (const [build, command] of builds) {
  Deno.test({
    name: `codex CLI over a websocket (${build}): shell, apply_patch, image, tty, watch`,
    ignore: !codex,
    sanitizeResources: false,
    fn: async () => {
      const [server, token, stop] = await tokenServer(command());
      const relay = await new Relay(server.url, { Authorization: `Bearer ${token}` }).start();
      const [dir, cleanup] = await workspace();
      try {
        // A project root, so the CLI looks for project docs (AGENTS.md) in it.
        await mkdir(join(dir, ".git"));
        await writeFile(join(dir, "existing.txt"), "old line\n");
        await writeFile(join(dir, "doomed.txt"), "bye\n");
        await writeFile(join(dir, "mover.txt"), "keep\n");
        // A 1x1 PNG.
        const png = Uint8Array.from(
          atob(
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
          ),
          (c) => c.charCodeAt(0),
        );
        await writeFile(join(dir, "dot.png"), png);
        const { run, outputs } = await drive(
          [
            {
              call: "exec_command",
              args: { cmd: "echo remote-ran > shell.txt; echo out-$((6*7))" },
            },
            { call: "exec_command", args: { cmd: PATCH } },
            { call: "view_image", args: { path: join(dir, "dot.png") } },
            { call: "exec_command", args: { cmd: "cat", tty: true, yield_time_ms: 500 } },
            {
              call: "write_stdin",
              args: (outputs) => ({
                session_id: Number(/session ID (\d+)/i.exec(outputs.get("call_4") ?? "")?.[1]),
                chars: "typed-in\n",
                yield_time_ms: 500,
              }),
            },
            // What the CLI 0.171 watches for new project docs (.agents/skills,
            // beside the present .git), created after it started.
            {
              call: "exec_command",
              args: {
                cmd: "sleep 1; mkdir -p .agents/skills; echo '# rules' > AGENTS.md; sleep 1",
              },
            },
            { say: "all done" },
          ],
          { url: relay.url, token },
          dir,
        );
        assert.equal(run.code, 0, run.output);
        // Shell: on disk, and its output reached the model.
        assert.equal(await readFile(join(dir, "shell.txt"), "utf8"), "remote-ran\n");
        assert.match(outputs.get("call_1")!, /out-42/);
        // apply_patch: add, nested add, update, delete, move.
        assert.equal(await readFile(join(dir, "added.txt"), "utf8"), "first\n");
        assert.equal(await readFile(join(dir, "deep/er/nested.txt"), "utf8"), "nested\n");
        assert.equal(await readFile(join(dir, "existing.txt"), "utf8"), "new line\n");
        assert.equal(existsSync(join(dir, "doomed.txt")), false);
        assert.equal(existsSync(join(dir, "mover.txt")), false);
        assert.equal(await readFile(join(dir, "moved/mover.txt"), "utf8"), "keep\n");
        assert.match(outputs.get("call_2")!, /Success/);
        // view_image read the file through the server.
        assert.ok(
          relay.seen("fs/readFile").some((m) => String(m.params.path).endsWith("dot.png")),
          "the image was not read through the server",
        );
        assert.doesNotMatch(outputs.get("call_3") ?? "", /error|failed/i);
        // A terminal fed through write_stdin.
        assert.match(outputs.get("call_5")!, /typed-in/);
        // Everything ran on the server.
        // shell, the terminal, the AGENTS.md writer (apply_patch needs no process).
        assert.ok(relay.seen("process/start").length >= 3);
        // Project docs created after the start: the CLI's watch fired.
        assert.ok(relay.seen("fs/watchMissing").length > 0, "the CLI did not watch for AGENTS.md");
        assert.ok(relay.seen("fs/missingChanged").length > 0, "no fs/missingChanged was sent");
      } finally {
        await relay.close();
        await cleanup();
        await stop();
      }
    },
  });

  Deno.test({
    name:
      `codex CLI (${build}): a dropped websocket mid-command resumes; output and exit code arrive`,
    ignore: !codex,
    sanitizeResources: false,
    fn: async () => {
      const [server, token, stop] = await tokenServer(command(), ["--session-grace-ms", "20000"]);
      const relay = await new Relay(server.url, { Authorization: `Bearer ${token}` }).start();
      const [dir, cleanup] = await workspace();
      try {
        const cutter = (async () => {
          // Cut once the command has started and printed its first line.
          while (!relay.traffic.some((t) => t.msg.method === "process/output")) {
            await new Promise((r) => setTimeout(r, 20));
          }
          relay.cut();
        })();
        const { run, outputs } = await drive(
          [
            {
              call: "exec_command",
              args: {
                cmd: "echo before-drop; sleep 2; echo after-drop; exit 3",
                yield_time_ms: 10000,
              },
            },
            { say: "done" },
          ],
          { url: relay.url, token },
          dir,
        );
        await cutter;
        assert.equal(run.code, 0, run.output);
        const out = outputs.get("call_1")!;
        assert.match(out, /before-drop/);
        assert.match(out, /after-drop/);
        assert.match(out, /exited with code 3/);
        const inits = relay.seen("initialize");
        assert.ok(inits.length >= 2, "the CLI did not reconnect");
        assert.ok(inits.some((m) => typeof m.params.resumeSessionId === "string"), "no resume");
      } finally {
        await relay.close();
        await cleanup();
        await stop();
      }
    },
  });

  Deno.test({
    name: `codex CLI (${build}): the server launched as a stdio program, directly and over ssh`,
    ignore: !codex,
    sanitizeResources: false,
    fn: async () => {
      const [dir, cleanup] = await workspace();
      try {
        if (command()[0] === DIST_BINARY) await ensureBinary();
        const [program, ...args] = command();
        const direct = await drive(
          [
            { call: "exec_command", args: { cmd: "echo via-stdio > stdio.txt; echo ok-stdio" } },
            { say: "done" },
          ],
          { program, args },
          dir,
        );
        assert.equal(direct.run.code, 0, direct.run.output);
        assert.equal(await readFile(join(dir, "stdio.txt"), "utf8"), "via-stdio\n");
        assert.match(direct.outputs.get("call_1")!, /ok-stdio/);
        const missing = sshdMissingReason();
        if (missing) {
          console.error(`the ssh half skipped: ${missing}`);
          return;
        }
        const sshd = await startSshd();
        try {
          // ssh runs the command through the remote shell: one quoted line.
          const remote = [program, ...args].map(shellQuote).join(" ");
          const viaSsh = await drive(
            [
              { call: "exec_command", args: { cmd: "echo via-ssh > ssh.txt; echo ok-ssh" } },
              { say: "done" },
            ],
            { program: "ssh", args: [...sshd.sshArgs, sshd.destination, remote] },
            dir,
          );
          assert.equal(viaSsh.run.code, 0, viaSsh.run.output);
          assert.equal(await readFile(join(dir, "ssh.txt"), "utf8"), "via-ssh\n");
          assert.match(viaSsh.outputs.get("call_1")!, /ok-ssh/);
        } finally {
          await sshd.stop();
        }
      } finally {
        await cleanup();
      }
    },
  });
}

for (const [build, command] of builds) {
  Deno.test({
    name: `codex CLI -s workspace-write (${build}): writes inside land, writes outside are refused`,
    ignore: !codex || bwrapMissing(),
    sanitizeResources: false,
    fn: async () => {
      const [server, token, stop] = await tokenServer(command());
      const relay = await new Relay(server.url, { Authorization: `Bearer ${token}` }).start();
      // Away from /tmp, which workspace-write makes writable.
      const dir = await mkdtemp("/var/tmp/codex-ws-");
      const outside = await mkdtemp("/var/tmp/codex-outside-");
      try {
        await mkdir(join(dir, ".git"));
        const { run, outputs } = await drive(
          [
            { call: "exec_command", args: { cmd: "echo inside > inside.txt; echo wrote-inside" } },
            { call: "exec_command", args: { cmd: `echo outside > ${outside}/outside.txt` } },
            {
              call: "exec_command",
              args: {
                cmd:
                  "apply_patch <<'P'\n*** Begin Patch\n*** Add File: patched.txt\n+p\n*** End Patch\nP",
              },
            },
            { call: "exec_command", args: { cmd: "echo git > .git/config" } },
            { say: "done" },
          ],
          { url: relay.url, token },
          dir,
          "workspace-write",
        );
        assert.equal(run.code, 0, run.output);
        assert.equal(await readFile(join(dir, "inside.txt"), "utf8"), "inside\n");
        assert.match(outputs.get("call_1")!, /wrote-inside/);
        assert.equal(existsSync(join(outside, "outside.txt")), false, "a write escaped");
        assert.match(outputs.get("call_2")!, /Read-only file system/);
        assert.equal(await readFile(join(dir, "patched.txt"), "utf8"), "p\n");
        assert.equal(existsSync(join(dir, ".git/config")), false, ".git was writable");
        // Through this server, sandboxed, and said so.
        const starts = relay.seen("process/start");
        assert.ok(starts.length >= 3 && starts.every((m) => m.params.sandbox !== null));
        const answers = relay.traffic.filter((t) =>
          t.from === "server" && t.msg.result?.sandboxType
        );
        assert.ok(answers.every((t) => t.msg.result.sandboxType === "linuxSeccomp"));
        const exits = relay.seen("process/exited").map((m) => m.params.sandboxDenied);
        assert.deepEqual(exits.filter((d) => d).length, 2, JSON.stringify(exits));
        assert.ok(
          relay.seen("fs/writeFile").some((m) => m.params.sandbox),
          "apply_patch unsandboxed",
        );
      } finally {
        await relay.close();
        await rm(dir, { recursive: true, force: true });
        await rm(outside, { recursive: true, force: true });
        await stop();
      }
    },
  });
}
