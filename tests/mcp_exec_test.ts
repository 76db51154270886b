/**
 * `exec-server mcp` end to end on stdio: the command tools (exec_command,
 * write_stdin, list_sessions, kill_session) against this host, spoken to
 * as an MCP client would, under Deno and (`mcpRuntimes`) the npm build on
 * Node and the binary.
 */
import assert from "node:assert/strict";
import { eventually, pidsByArgv0, serverCommand } from "./harness.ts";
import { callTool, initialize, mcpRuntimes, McpStdio, textOf } from "./mcp_fixture.ts";

async function withMcp(
  command: string[],
  flags: string[],
  fn: (c: McpStdio) => Promise<void>,
): Promise<void> {
  const client = new McpStdio(flags, command);
  try {
    await initialize(client);
    await fn(client);
  } finally {
    await client.close();
  }
}

/** Poll a session with empty writes until it exits; all text and the final result. */
async function pollToExit(
  c: McpStdio,
  sessionId: number,
): Promise<{ text: string; last: Record<string, unknown> }> {
  let text = "";
  for (let i = 0; i < 200; i++) {
    const r = await callTool(c, "write_stdin", {
      session_id: sessionId,
      chars: "",
      yield_time_ms: 500,
    });
    text += outputOf(r);
    if (r.structuredContent.exit_code !== null) return { text, last: r.structuredContent };
  }
  throw new Error(`session ${sessionId} did not exit`);
}

/** The command's output in a command result (after the "Output:" line). */
function outputOf(r: Record<string, unknown>): string {
  const t = textOf(r);
  const at = t.indexOf("\nOutput:\n");
  return at < 0 ? "" : t.slice(at + "\nOutput:\n".length);
}

for (const rt of mcpRuntimes()) {
  Deno.test({
    name:
      `mcp (${rt.name}): a fast command answers with its output, stderr included, and exit code`,
    ignore: rt.ignore,
    fn: () =>
      withMcp(rt.command(), [], async (c) => {
        const r = await callTool(c, "exec_command", { cmd: "echo out; echo err >&2; exit 3" });
        assert.equal(r.structuredContent.exit_code, 3, textOf(r));
        assert.equal(r.structuredContent.session_id, null);
        assert.match(outputOf(r), /out\n/);
        assert.match(outputOf(r), /err\n/);
        assert.equal(r.isError, undefined);
      }),
  });

  Deno.test({
    name: `mcp (${rt.name}): a long command returns a session within its yield; polls get every ` +
      `line once, then the exit code`,
    ignore: rt.ignore,
    fn: () =>
      withMcp(rt.command(), [], async (c) => {
        const first = await callTool(c, "exec_command", {
          cmd: "for i in $(seq 1 8); do echo line$i; sleep 0.2; done; exit 4",
          yield_time_ms: 100,
        });
        const id = first.structuredContent.session_id;
        assert.equal(typeof id, "number", textOf(first));
        assert.equal(first.structuredContent.exit_code, null);
        assert.match(textOf(first), /Still running/);
        const rest = await pollToExit(c, id);
        const lines = (outputOf(first) + rest.text).split("\n").filter((l) => l !== "");
        assert.deepEqual(lines, [1, 2, 3, 4, 5, 6, 7, 8].map((i) => `line${i}`));
        assert.equal(rest.last.exit_code, 4);
        // The exit was read: the session is gone.
        const gone = await callTool(c, "write_stdin", { session_id: id });
        assert.equal(gone.isError, true);
        assert.match(textOf(gone), new RegExp(`no session ${id}`));
      }),
  });

  Deno.test({
    name:
      `mcp (${rt.name}): the output and exit of a command that ended unread are kept until read`,
    ignore: rt.ignore,
    fn: () =>
      withMcp(rt.command(), [], async (c) => {
        const r = await callTool(c, "exec_command", {
          cmd: "sleep 0.3; echo quick-out; echo quick-err >&2; exit 9",
          yield_time_ms: 0,
        });
        const id = r.structuredContent.session_id;
        assert.equal(typeof id, "number");
        await eventually(async () => {
          const l = await callTool(c, "list_sessions");
          return l.structuredContent.sessions.some((s: Record<string, unknown>) =>
            s.session_id === id && s.running === false
          );
        });
        const done = await callTool(c, "write_stdin", { session_id: id, yield_time_ms: 0 });
        assert.equal(done.structuredContent.exit_code, 9);
        assert.match(outputOf(done), /quick-out/);
        assert.match(outputOf(done), /quick-err/);
      }),
  });

  Deno.test({
    name: `mcp (${rt.name}): a tty command reads what write_stdin types; pipes get no stdin at all`,
    ignore: rt.ignore,
    fn: () =>
      withMcp(rt.command(), [], async (c) => {
        const r = await callTool(c, "exec_command", {
          cmd: "read x; echo got:$x",
          tty: true,
          yield_time_ms: 200,
        });
        const id = r.structuredContent.session_id;
        assert.equal(typeof id, "number", textOf(r));
        const w = await callTool(c, "write_stdin", {
          session_id: id,
          chars: "hello\n",
          yield_time_ms: 5000,
        });
        const done = w.structuredContent.exit_code === null
          ? await pollToExit(c, id)
          : { text: "", last: w.structuredContent };
        assert.match(outputOf(w) + done.text, /got:hello/);
        assert.equal(done.last.exit_code, 0);
        // Without a tty, stdin is empty: cat ends at once instead of reading the MCP stream.
        const cat = await callTool(c, "exec_command", {
          cmd: "cat; echo cat-done",
          yield_time_ms: 20000,
        });
        assert.equal(cat.structuredContent.exit_code, 0, textOf(cat));
        assert.equal(outputOf(cat), "cat-done\n");
        const sleeper = await callTool(c, "exec_command", {
          argv: ["sleep", "5"],
          yield_time_ms: 0,
        });
        const refused = await callTool(c, "write_stdin", {
          session_id: sleeper.structuredContent.session_id,
          chars: "x",
        });
        assert.equal(refused.isError, true);
        assert.match(textOf(refused), /without a tty/);
        await callTool(c, "kill_session", { session_id: sleeper.structuredContent.session_id });
      }),
  });
}

Deno.test("mcp: a cancelled call answers nothing, and the command runs on with its output kept", () =>
  withMcp(serverCommand(), [], async (c) => {
    const go = `/tmp/mcp-cancel-${crypto.randomUUID()}`;
    const id = c.nextId;
    // The command cannot end before the test lets it (by creating `go`).
    const pending = c.request("tools/call", {
      name: "exec_command",
      arguments: {
        cmd: `echo before; while [ ! -e ${go} ]; do sleep 0.05; done; echo after; rm ${go}`,
        yield_time_ms: 30000,
      },
    });
    let answered = false;
    pending.then(() => answered = true, () => {});
    await c.notify("notifications/cancelled", { requestId: id, reason: "test" });
    let session = 0;
    await eventually(async () => {
      const l = await callTool(c, "list_sessions");
      session = l.structuredContent.sessions[0]?.session_id ?? 0;
      return session !== 0;
    });
    await Deno.writeTextFile(go, "");
    const rest = await pollToExit(c, session);
    assert.equal(rest.text, "before\nafter\n");
    assert.equal(rest.last.exit_code, 0);
    assert.equal(answered, false, "a cancelled request was answered");
  }));

Deno.test("mcp: kill_session kills the whole tree, and a signal reaches the group", () =>
  withMcp(serverCommand(), [], async (c) => {
    const marker = `mcp-kill-${Date.now()}`;
    const r = await callTool(c, "exec_command", {
      cmd: `bash -c 'exec -a ${marker} sleep 300' & bash -c 'exec -a ${marker} sleep 300'; wait`,
      yield_time_ms: 300,
    });
    const id = r.structuredContent.session_id;
    await eventually(async () => (await pidsByArgv0(marker)).length === 2);
    const k = await callTool(c, "kill_session", { session_id: id });
    assert.notEqual(k.structuredContent.exit_code, null, textOf(k));
    await eventually(async () => (await pidsByArgv0(marker)).length === 0);
    const t = await callTool(c, "exec_command", {
      cmd: "trap 'echo got-int; exit 5' INT; echo trap-set; while :; do sleep 0.1; done",
      yield_time_ms: 300,
    });
    // The signal goes only once the trap is in place, however slow the shell is to start.
    let seen = outputOf(t);
    while (!seen.includes("trap-set")) {
      const p = await callTool(c, "write_stdin", {
        session_id: t.structuredContent.session_id,
        yield_time_ms: 200,
      });
      seen += outputOf(p);
    }
    const s = await callTool(c, "kill_session", {
      session_id: t.structuredContent.session_id,
      signal: "SIGINT",
    });
    assert.equal(s.structuredContent.exit_code, 5, textOf(s));
    assert.match(outputOf(s), /got-int/);
  }));

Deno.test("mcp: output over the cap keeps its start and end and says how much was left out", () =>
  withMcp(serverCommand(), [], async (c) => {
    const r = await callTool(c, "exec_command", { cmd: "seq 1 100000", max_output_bytes: 1000 });
    assert.equal(r.structuredContent.truncated, true);
    const out = outputOf(r);
    assert.ok(out.startsWith("1\n2\n3\n"), out.slice(0, 20));
    assert.ok(out.endsWith("99999\n100000\n"), out.slice(-20));
    const omitted = Number(/\[\.\.\. (\d+) bytes omitted \.\.\.\]/.exec(out)?.[1]);
    assert.equal(omitted, r.structuredContent.omitted_bytes);
    assert.equal(
      omitted + new TextEncoder().encode(out).length -
        `\n[... ${omitted} bytes omitted ...]\n`.length,
      588895,
    );
  }));

Deno.test("mcp: commands run in the login shell, in the root or home, with the call's env", () =>
  withMcp(serverCommand(), ["--root", "/tmp"], async (c) => {
    const r = await callTool(c, "exec_command", {
      cmd: 'printf "%s|%s|%s|%s" "$PWD" "$HOME" "$FOO" "$TERM"',
      env: { FOO: "bar" },
    });
    const [pwd, home, foo, term] = outputOf(r).split("|");
    assert.equal(pwd, "/tmp");
    assert.ok(home.startsWith("/"), home);
    assert.equal(foo, "bar");
    assert.equal(term, "dumb");
    const rel = await callTool(c, "exec_command", { argv: ["pwd"], workdir: "." });
    assert.equal(outputOf(rel), "/tmp\n");
    const bad = await callTool(c, "exec_command", { argv: ["pwd"], workdir: "/no/such/dir" });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /\/no\/such\/dir/);
  }));

Deno.test("mcp: bad arguments are tool errors naming the value; an unknown tool is -32602", () =>
  withMcp(serverCommand(), [], async (c) => {
    const both = await callTool(c, "exec_command", { cmd: "true", argv: ["true"] });
    assert.equal(both.isError, true);
    assert.match(textOf(both), /either cmd .* or argv/);
    const yieldBad = await callTool(c, "exec_command", { cmd: "true", yield_time_ms: "soon" });
    assert.match(textOf(yieldBad), /yield_time_ms must be a whole number .* got "soon"/);
    const relative = await callTool(c, "exec_command", { argv: ["pwd"], workdir: "src" });
    assert.match(textOf(relative), /workdir must be an absolute path, got "src"/);
    const unknown = await c.request("tools/call", { name: "nope", arguments: {} });
    assert.equal(unknown.error?.code, -32602);
    assert.match(unknown.error.message, /unknown tool "nope"/);
    // A broken line gets a parse error, and the server lives on.
    c.writeLine("{not json");
    const still = await callTool(c, "exec_command", { argv: ["echo", "alive"] });
    assert.equal(outputOf(still), "alive\n");
  }));

Deno.test("mcp: --strip-ansi cleans tty output", () =>
  withMcp(serverCommand(), ["--strip-ansi"], async (c) => {
    const r = await callTool(c, "exec_command", {
      cmd: "printf '\\033[31mred\\033[0m\\n10%%\\r20%%\\n'",
      tty: true,
    });
    assert.equal(outputOf(r), "red\n20%\n");
  }));
