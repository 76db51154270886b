/**
 * The MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`, a
 * client written by MCP's maintainers) against `exec-server mcp`: every
 * tool is listed with no schema portability finding (`--strict` exits 6
 * on any error and reports every finding), and `tools/call` works, over
 * stdio on each runtime and over Streamable HTTP.
 *
 * The Inspector is found through INSPECTOR_BIN, or where `.ci/run`
 * installs it (`~/.cache/exec-server-ci/inspector`).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { TOOLS } from "../src/mcp/tool_list.ts";
import { mcpRuntimes, startMcpHttp } from "./mcp_fixture.ts";

const INSPECTOR = [
  process.env.INSPECTOR_BIN,
  join(homedir(), ".cache/exec-server-ci/inspector/node_modules/.bin/mcp-inspector"),
].find((p): p is string => !!p && existsSync(p));
if (!INSPECTOR) {
  console.error(
    "MCP Inspector tests skipped: npm install --prefix ~/.cache/exec-server-ci/inspector " +
      "@modelcontextprotocol/inspector@2.12.0 (.ci/run does this)",
  );
}

/** Run the Inspector's CLI; its exit code and output. */
function inspect(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      INSPECTOR!,
      ["--cli", ...args],
      { maxBuffer: 16 << 20, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** `tools/list --strict --format json`: every tool, and no portability finding. */
async function assertToolList(target: string[]) {
  const r = await inspect(["--method", "tools/list", "--strict", "--format", "json", ...target]);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.result.tools.map((t: { name: string }) => t.name), TOOLS.map((t) => t.name));
  assert.equal(out.schemaFindings, undefined, JSON.stringify(out.schemaFindings));
  assert.doesNotMatch(r.stderr, /portability/i);
}

/** A write, then a read and a command that see it. */
async function assertCalls(target: string[]) {
  const dir = await mkdtemp(join(tmpdir(), "mcp-inspector-"));
  try {
    const path = join(dir, "hello.txt");
    // Options first: the target ends the command line ("--" and a server command
    // take everything after them; --header takes the words after it).
    const call = (tool: string, args: Record<string, unknown>) =>
      inspect([
        "--method",
        "tools/call",
        "--tool-name",
        tool,
        "--tool-args-json",
        JSON.stringify(args),
        "--format",
        "json",
        ...target,
      ]);
    const w = await call("write_file", { path, content: "from the inspector\n" });
    assert.equal(w.code, 0, w.stderr);
    assert.equal(await readFile(path, "utf8"), "from the inspector\n");
    const r = await call("read_file", { path });
    assert.equal(JSON.parse(r.stdout).result.content[0].text, "from the inspector\n");
    const x = await call("exec_command", { cmd: `wc -c < ${path}` });
    assert.equal(JSON.parse(x.stdout).result.structuredContent.output.trim(), "19");
    // A tool error is reported as one (the Inspector exits 5 on isError).
    const e = await call("read_file", { path: join(dir, "missing") });
    assert.equal(e.code, 5, e.stderr);
    assert.match(JSON.parse(e.stdout).result.content[0].text, /missing/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

for (const rt of mcpRuntimes()) {
  Deno.test({
    name:
      `mcp inspector (${rt.name}): tools/list has every tool with portable schemas; tools/call works`,
    ignore: !INSPECTOR || rt.ignore,
    fn: async () => {
      // "--" keeps the Inspector from reading the server's own flags (deno's -A).
      const target = ["--", ...rt.command(), "mcp"];
      await assertToolList(target);
      await assertCalls(target);
    },
  });
}

Deno.test({
  name: "mcp inspector: over Streamable HTTP with the bearer token; refused without it",
  ignore: !INSPECTOR,
  fn: async () => {
    const server = await startMcpHttp();
    try {
      const auth = ["--header", `Authorization: Bearer ${server.token}`];
      await assertToolList([server.url, "--stored-auth-only", ...auth]);
      await assertCalls([server.url, "--stored-auth-only", ...auth]);
      const anonymous = await inspect([server.url, "--stored-auth-only", "--method", "tools/list"]);
      // 3: authentication required.
      assert.equal(anonymous.code, 3, anonymous.stderr);
    } finally {
      await server.stop();
    }
  },
});
