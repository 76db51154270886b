/**
 * The real Codex CLI 0.171 as the MCP client of `exec-server mcp` (the
 * built binary, `[mcp_servers.exec]`), with a mock model scripting the
 * calls: a long command returns a session within its yield, polls get
 * every line once and the exit code, `edit_file` lands on disk, and a call
 * cut short by `tool_timeout_sec` leaves its command running and its
 * output readable. Over stdio, over Streamable HTTP, and with the tools on
 * a remote target (a websocket server, the test sshd). Commands wait for
 * files the model writes, so no step depends on how fast the machine is.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  codexBinary,
  MockModel,
  mockModelHome,
  runCodex,
  startTokenServer,
  type Step,
} from "./codex_cli_fixture.ts";
import { DIST_BINARY, ensureBinary } from "./binary_fixture.ts";
import { eventually, pidsByArgv0 } from "./harness.ts";
import { sshdMissingReason, startSshd } from "./ssh_fixture.ts";
import { startMcpHttp } from "./mcp_fixture.ts";

const codex = codexBinary();
const NS = "mcp__exec";
/** The CLI's timeout for each call: shorter than the cut call's yield, longer than the polls'. */
const TOOL_TIMEOUT_S = 3;

/** The structured result in a tool output as the CLI shows it to the model. */
function structured(output: string | undefined): Record<string, unknown> {
  const at = output?.indexOf("Output:\n") ?? -1;
  if (output === undefined || at < 0) throw new Error(`no structured output in ${output}`);
  return JSON.parse(output.slice(at + "Output:\n".length));
}

type Args = Record<string, unknown> | ((outputs: Map<string, string>) => Record<string, unknown>);

/** A call of one of the server's tools. */
const exec = (args: Args, name = "exec_command"): Step => ({ call: name, namespace: NS, args });

/** The scripted session: see the module comment. `dir` is where the go-files and the edited file are. */
function script(dir: string, marker: string): Step[] {
  const wait = (name: string) => `while [ ! -e ${dir}/${name} ]; do sleep 0.05; done`;
  // A step's arguments must not throw (the mock model would fail outside
  // the test); a missing session shows up in judge(), with the outputs.
  const session = (call: string) => (o: Map<string, string>) => {
    try {
      return structured(o.get(call)).session_id;
    } catch {
      return -1;
    }
  };
  return [
    // call_1..4: a long command, polled to its end.
    exec({ cmd: `echo L1; echo L2; ${wait("go1")}; echo L3; echo L4; exit 3`, yield_time_ms: 500 }),
    exec(
      (o: Map<string, string>) => ({
        session_id: session("call_1")(o),
        chars: "",
        yield_time_ms: 200,
      }),
      "write_stdin",
    ),
    exec({ path: `${dir}/go1`, content: "" }, "write_file"),
    exec(
      (o: Map<string, string>) => ({ session_id: session("call_1")(o), yield_time_ms: 2500 }),
      "write_stdin",
    ),
    // call_5: an edit.
    exec(
      { path: `${dir}/app.py`, edits: [{ oldText: "return 1", newText: "return 42" }] },
      "edit_file",
    ),
    // call_6..9: a call the CLI cuts short; the command runs on and is read later.
    exec({ cmd: `echo start; ${wait("go2")}; echo end`, yield_time_ms: 20_000 }),
    exec({}, "list_sessions"),
    exec({ path: `${dir}/go2`, content: "" }, "write_file"),
    exec((o: Map<string, string>) => {
      try {
        const sessions = structured(o.get("call_7")).sessions as { session_id: number }[];
        return { session_id: sessions[0].session_id, yield_time_ms: 2500 };
      } catch {
        return { session_id: -1 };
      }
    }, "write_stdin"),
    // call_10: left running when the CLI ends, which must end it too.
    exec({ argv: ["bash", "-c", `exec -a ${marker} sleep 300`], yield_time_ms: 0 }),
    { say: "done" },
  ];
}

/** Check what the model received and what is on disk. */
async function judge(outputs: Map<string, string>, dir: string, marker: string, log: string) {
  try {
    await judgeOutputs(outputs, dir);
  } catch (err) {
    const seen = [...outputs].map(([k, v]) => `${k}: ${v}`).join("\n");
    throw new Error(`${err instanceof Error ? err.message : err}\noutputs:\n${seen}\nlog:\n${log}`);
  }
  // The CLI ended: nothing the tools started is left.
  await eventually(async () => (await pidsByArgv0(marker)).length === 0);
}

async function judgeOutputs(outputs: Map<string, string>, dir: string) {
  const polls = ["call_1", "call_2", "call_4"].map((c) => structured(outputs.get(c)));
  assert.equal(
    typeof polls[0].session_id,
    "number",
    "the long command did not return a session",
  );
  assert.equal(polls[0].exit_code, null);
  const lines = polls.map((p) => p.output).join("").split("\n").filter((l) => l !== "");
  assert.deepEqual(lines, ["L1", "L2", "L3", "L4"]);
  assert.equal(polls[2].exit_code, 3);
  assert.match(String(structured(outputs.get("call_5")).diff), /-\s+return 1\n\+\s+return 42/);
  assert.equal(await readFile(join(dir, "app.py"), "utf8"), "def f():\n    return 42\n");
  assert.match(outputs.get("call_6") ?? "", /timed out awaiting tools\/call after 3s/);
  const listed = structured(outputs.get("call_7")).sessions as { running: boolean }[];
  assert.equal(listed.length, 1);
  assert.equal(listed[0].running, true);
  const late = structured(outputs.get("call_9"));
  assert.equal(late.output, "start\nend\n");
  assert.equal(late.exit_code, 0);
}

/** Run the script through the CLI with `[mcp_servers.exec]` set to `server`. */
async function drive(server: string[], env: Record<string, string> = {}) {
  const dir = await mkdtemp(join(tmpdir(), "mcp-codex-"));
  await writeFile(join(dir, "app.py"), "def f():\n    return 1\n");
  const marker = `mcp-codex-${crypto.randomUUID().slice(0, 8)}`;
  const model = await new MockModel(script(dir, marker)).start();
  const home = await mockModelHome(model, [
    `[mcp_servers.exec]`,
    ...server,
    `tool_timeout_sec = ${TOOL_TIMEOUT_S}`,
    // Waited for however busy the machine is (the default gives a server 1 s).
    `required = true`,
    `startup_timeout_sec = 60`,
  ]);
  try {
    const run = await runCodex(home, dir, "do the task", "danger-full-access", 120_000, env);
    assert.equal(run.code, 0, run.output);
    await judge(model.toolOutputs(), dir, marker, run.output);
  } finally {
    await model.close();
    await rm(home, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
  }
}

const stdio = (args: string[]) => [
  `command = ${JSON.stringify(DIST_BINARY)}`,
  `args = ${JSON.stringify(["mcp", ...args])}`,
];

Deno.test({
  name: "mcp + codex CLI: over stdio, on this host",
  ignore: !codex,
  sanitizeResources: false,
  fn: async () => {
    await ensureBinary();
    await drive(stdio([]));
  },
});

Deno.test({
  name: "mcp + codex CLI: over Streamable HTTP, with a bearer token",
  ignore: !codex,
  sanitizeResources: false,
  fn: async () => {
    await ensureBinary();
    const server = await startMcpHttp([], [DIST_BINARY]);
    try {
      await drive([`url = "${server.url}"`, `bearer_token_env_var = "EXEC_MCP_TOKEN"`], {
        EXEC_MCP_TOKEN: server.token,
      });
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name: "mcp + codex CLI: the tools on a remote exec-server over a websocket",
  ignore: !codex,
  sanitizeResources: false,
  fn: async () => {
    await ensureBinary();
    const token = "mcp-remote-token-0123456789abcdef";
    const [ws, stop] = await startTokenServer(token, [], [DIST_BINARY]);
    const dir = await mkdtemp(join(tmpdir(), "mcp-ws-token-"));
    await writeFile(join(dir, "token"), token, { mode: 0o600 });
    try {
      await drive(stdio(["--connect", ws.url, "--connect-token-file", join(dir, "token")]));
    } finally {
      await stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
});

Deno.test({
  name: "mcp + codex CLI: the tools on an ssh host, through the binary's own bootstrap",
  ignore: !codex || sshdMissingReason() !== undefined,
  sanitizeResources: false,
  fn: async () => {
    await ensureBinary();
    const sshd = await startSshd();
    try {
      const options = [
        `Port=${sshd.port}`,
        `IdentityFile=${sshd.keyFile}`,
        "StrictHostKeyChecking=no",
        "UserKnownHostsFile=/dev/null",
        "BatchMode=yes",
        "LogLevel=ERROR",
      ].flatMap((o) => ["--ssh-option", o]);
      await drive(stdio(["--ssh", sshd.destination, ...options]));
    } finally {
      await sshd.stop();
    }
  },
});
