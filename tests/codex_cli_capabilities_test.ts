/**
 * What the real Codex CLI 0.171 finds on a remote host through this
 * server, with `include_local = false` so that nothing can come from the
 * CLI's own machine: the project's skills (`fs/walk`, then `fs/readFile`),
 * an MCP server the host declares in its own `$CODEX_HOME/config.toml`
 * (`environmentConfig/read`, then `http/request`), and one the CLI's
 * config declares for the remote environment, with a bearer token that
 * only the server's environment holds. Each case is judged by what the
 * mock model received and what the MCP server saw.
 *
 * Skipped, with the reason, when the CLI is not installed (`.ci/run`
 * installs it into ~/.cache/exec-server-ci/codex).
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  codexBinary,
  codexHome,
  MockModel,
  Relay,
  runCodex,
  startTokenServer,
  type Step,
  workspace,
} from "./codex_cli_fixture.ts";
import { DIST_BINARY, ensureBinary } from "./binary_fixture.ts";
import { type Msg, serverCommand, unb64 } from "./harness.ts";
import { McpHttpServer } from "./mcp_http_fixture.ts";

const codex = codexBinary();
if (!codex) {
  console.error(
    "codex CLI capability tests skipped: no codex binary (npm install --prefix " +
      "~/.cache/exec-server-ci/codex @openai/codex@0.171.0; .ci/run does this)",
  );
}

/** The builds the CLI is run against: the source under Deno, and the binary. */
const builds: [string, () => string[]][] = [
  ["source", serverCommand],
  ["binary", () => [DIST_BINARY]],
];

/** The token the MCP server wants; only the exec-server's environment holds it. */
const MCP_TOKEN = "mcp-secret-9f8e7d6c5b4a";

/** A server, its relay, and the host's own CODEX_HOME. */
interface Remote {
  relay: Relay;
  token: string;
  /** The exec-server's CODEX_HOME (not the CLI's). */
  hostHome: string;
  stop(): Promise<void>;
}

/**
 * Start `cmd` with its own CODEX_HOME, whose config.toml holds `hostConfig`,
 * and `env` added to its environment, behind a recording relay.
 */
async function startRemote(
  cmd: string[],
  hostConfig: string[],
  env: Record<string, string> = {},
): Promise<Remote> {
  if (cmd[0] === DIST_BINARY) await ensureBinary();
  const hostHome = await mkdtemp(join(tmpdir(), "codex-host-home-"));
  await writeFile(join(hostHome, "config.toml"), hostConfig.join("\n") + "\n");
  const vars = Object.entries({ ...env, CODEX_HOME: hostHome }).map(([k, v]) => `${k}=${v}`);
  const token = "codex-test-token-0123456789abcdef";
  const [server, stopServer] = await startTokenServer(token, ["--log-level", "debug"], [
    "env",
    ...vars,
    ...cmd,
  ]);
  const relay = await new Relay(server.url, { Authorization: `Bearer ${token}` }).start();
  return {
    relay,
    token,
    hostHome,
    stop: async () => {
      await relay.close();
      await stopServer();
      await rm(hostHome, { recursive: true, force: true });
    },
  };
}

/** Run `steps` through the CLI in `cwd` against `remote`; the model's view and the run. */
async function drive(steps: Step[], remote: Remote, cwd: string, cliConfig: string[] = []) {
  const model = await new MockModel(steps).start();
  const home = await codexHome(model, { url: remote.relay.url, token: remote.token }, cliConfig);
  try {
    const run = await runCodex(home, cwd, "do the task");
    return { run, outputs: model.toolOutputs(), requests: model.requests };
  } finally {
    await model.close();
    await rm(home, { recursive: true, force: true });
  }
}

/** All the text a model request carries: its instructions and every input text. */
function modelText(request: Msg): string {
  const texts: string[] = [];
  if (typeof request.instructions === "string") texts.push(request.instructions);
  for (const item of request.input ?? []) {
    if (typeof item.content === "string") texts.push(item.content);
    for (const part of Array.isArray(item.content) ? item.content : []) {
      if (typeof part.text === "string") texts.push(part.text);
    }
  }
  return texts.join("\n");
}

/** Write a SKILL.md with front matter naming `name` into `dir`. */
async function skill(dir: string, name: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "SKILL.md"),
    `---\nname: ${name}\ndescription: ${skillDescription(name)}\n---\n\n# ${name}\n\nDo it well.\n`,
  );
}

const skillDescription = (name: string) => `Use ${name} when the task asks for ${name} work.`;

/** The `fs/walk` answers the server gave, by the walked path. */
function walkAnswers(relay: Relay): Map<string, Msg> {
  const asked = new Map<unknown, string>();
  for (const t of relay.traffic) {
    if (t.from === "client" && t.msg.method === "fs/walk") asked.set(t.msg.id, t.msg.params.path);
  }
  const answers = new Map<string, Msg>();
  for (const t of relay.traffic) {
    const path = t.from === "server" && !t.msg.method ? asked.get(t.msg.id) : undefined;
    if (path !== undefined) answers.set(path, t.msg);
  }
  return answers;
}

/** The tools the model was shown in namespace `name` (an MCP server's are `mcp__NAME`). */
function namespaceTools(request: Msg, name: string): string[] {
  const tools: Msg[] = request.tools ?? [];
  const namespace = tools.find((t) => t.type === "namespace" && t.name === name);
  return (namespace?.tools ?? []).map((t: Msg) => t.name);
}

/** The names of the tools and namespaces a request offered, for messages. */
const offered = (request: Msg) => JSON.stringify((request.tools ?? []).map((t: Msg) => t.name));

/** The JSON-RPC methods carried by the CLI's `http/request` bodies. */
function relayedMcpMethods(relay: Relay): string[] {
  return relay.seen("http/request").flatMap((m) => {
    if (!m.params.bodyBase64) return [];
    try {
      return [JSON.parse(unb64(m.params.bodyBase64)).method];
    } catch {
      return [];
    }
  });
}

/** Assert that the MCP server was reached through `relay`, and that its answer reached the model. */
function assertMcpThroughServer(
  relay: Relay,
  mcp: McpHttpServer,
  outputs: Map<string, string>,
  q: string,
): void {
  const calls = mcp.toolCalls();
  assert.equal(calls.length, 1, `tools/call: ${JSON.stringify(mcp.methods())}`);
  assert.equal(calls[0].params.name, "lookup");
  assert.deepEqual(calls[0].params.arguments, { q });
  assert.match(outputs.get("call_1") ?? "", new RegExp(`answer-for-${q}`));
  // Every exchange went through the server's http/request, none around it.
  const requests = relay.seen("http/request");
  assert.ok(requests.length > 0, "no http/request");
  assert.ok(requests.every((m) => m.params.url === mcp.url), JSON.stringify(requests));
  // (The relay records a request before the server makes it: never fewer than the MCP server saw.)
  assert.ok(
    mcp.exchanges.length <= requests.length,
    `${mcp.exchanges.length} > ${requests.length}`,
  );
  for (const method of ["initialize", "tools/list", "tools/call"]) {
    assert.ok(relayedMcpMethods(relay).includes(method), `${method} not relayed`);
    assert.ok(mcp.methods().includes(method), `the MCP server got no ${method}`);
  }
  assert.ok(relay.seen("http/request/bodyDelta").length > 0, "no streamed body");
}

for (const [build, command] of builds) {
  Deno.test({
    name: `codex CLI (${build}): skills found by fs/walk, nested and symlinked; hidden ones pruned`,
    ignore: !codex,
    sanitizeResources: false,
    fn: async () => {
      const remote = await startRemote(command(), []);
      const [dir, cleanup] = await workspace();
      const elsewhere = await mkdtemp(join(tmpdir(), "codex-linked-skill-"));
      try {
        await mkdir(join(dir, ".git"));
        const skills = join(dir, ".agents/skills");
        await skill(join(skills, "alpha"), "alpha-skill");
        await skill(join(skills, "group/inner"), "inner-skill");
        await skill(elsewhere, "linked-skill");
        await symlink(elsewhere, join(skills, "linked"));
        await skill(join(skills, ".hidden"), "hidden-skill");
        const { run, requests } = await drive([{ say: "done" }], remote, dir);
        assert.equal(run.code, 0, run.output);
        const text = modelText(requests[0]);
        for (const name of ["alpha-skill", "inner-skill", "linked-skill"]) {
          assert.ok(
            text.includes(`- ${name}: ${skillDescription(name)}`),
            `${name} missing:\n${text}`,
          );
        }
        assert.ok(
          !text.includes("hidden-skill"),
          "a skill in a hidden directory reached the model",
        );
        // Found by the server's walk, which followed the symlink and pruned the hidden directory.
        const walks = [...walkAnswers(remote.relay)];
        const [root, walk] = walks.find(([path]) => path.endsWith("/.agents/skills")) ?? [];
        assert.ok(walk?.result, `no fs/walk of .agents/skills: ${JSON.stringify(walks)}`);
        const found = walk.result.entries.map((e: Msg) => e.path);
        for (const rel of ["alpha/SKILL.md", "group/inner/SKILL.md", "linked/SKILL.md"]) {
          assert.ok(found.includes(`${root}/${rel}`), `${rel}: ${JSON.stringify(found)}`);
        }
        // The hidden directory is listed (as upstream lists it) but not entered, nor read.
        assert.ok(!found.some((p: string) => p.includes(".hidden/")), JSON.stringify(found));
        const read = remote.relay.seen("fs/readFile").map((m) => m.params.path);
        // The CLI canonicalizes each SKILL.md, so the linked one is read at its target.
        assert.ok(read.includes(`file://${elsewhere}/SKILL.md`), JSON.stringify(read));
        assert.ok(!read.some((p) => p.includes(".hidden/")), JSON.stringify(read));
      } finally {
        await cleanup();
        await rm(elsewhere, { recursive: true, force: true });
        await remote.stop();
      }
    },
  });

  Deno.test({
    name: `codex CLI (${build}): an MCP server in the host's own config, over http/request`,
    ignore: !codex,
    sanitizeResources: false,
    fn: async () => {
      const mcp = await new McpHttpServer().start();
      const remote = await startRemote(command(), [`[mcp_servers.remote]`, `url = "${mcp.url}"`]);
      const [dir, cleanup] = await workspace();
      try {
        const { run, outputs, requests } = await drive(
          [{ call: "lookup", namespace: "mcp__remote", args: { q: "zebra" } }, { say: "done" }],
          remote,
          dir,
        );
        assert.equal(run.code, 0, run.output);
        // The CLI learnt of the server from the host's config only.
        const reads = remote.relay.seen("environmentConfig/read");
        assert.ok(reads.length > 0, "no environmentConfig/read");
        assert.ok(reads.some((m) => JSON.stringify(m.params.configPaths).includes("mcp_servers")));
        assert.deepEqual(
          namespaceTools(requests[0], "mcp__remote"),
          ["lookup"],
          offered(requests[0]),
        );
        assertMcpThroughServer(remote.relay, mcp, outputs, "zebra");
        // Answered as server-sent events, which arrived as streamed deltas.
        assert.ok(mcp.exchanges.some((e) => /event-stream/.test(String(e.headers.accept))));
      } finally {
        await cleanup();
        await remote.stop();
        await mcp.close();
      }
    },
  });

  Deno.test({
    name: `codex CLI (${build}): an MCP server in the CLI's config for the remote environment, ` +
      `its bearer token from the server's environment`,
    ignore: !codex,
    sanitizeResources: false,
    fn: async () => {
      const mcp = await new McpHttpServer({ sse: false }).start();
      const remote = await startRemote(command(), [], { MCP_TOK: MCP_TOKEN });
      const [dir, cleanup] = await workspace();
      try {
        const { run, outputs, requests } = await drive(
          [{ call: "lookup", namespace: "mcp__remote2", args: { q: "yak" } }, { say: "done" }],
          remote,
          dir,
          [
            `[mcp_servers.remote2]`,
            `url = "${mcp.url}"`,
            `environment_id = "box"`,
            `bearer_token_env_var = "MCP_TOK"`,
          ],
        );
        assert.equal(run.code, 0, run.output);
        assert.deepEqual(
          namespaceTools(requests[0], "mcp__remote2"),
          ["lookup"],
          offered(requests[0]),
        );
        assertMcpThroughServer(remote.relay, mcp, outputs, "yak");
        // The CLI named the variable; the server resolved it, and the token never crossed the wire.
        const auth = remote.relay.seen("http/request").map((m) =>
          m.params.headers.find((h: Msg) => h.name.toLowerCase() === "authorization")
        );
        assert.ok(auth.every((h) => h?.valueEnvVar === "MCP_TOK"), JSON.stringify(auth));
        assert.ok(!JSON.stringify(remote.relay.traffic).includes(MCP_TOKEN), "the token was sent");
        const posts = mcp.exchanges.filter((e) => e.method === "POST");
        assert.ok(posts.length > 0);
        for (const e of posts) assert.equal(e.headers.authorization, `Bearer ${MCP_TOKEN}`);
      } finally {
        await cleanup();
        await remote.stop();
        await mcp.close();
      }
    },
  });
}
