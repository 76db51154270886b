/**
 * The Codex CLI's questions about the host, against the real server in its
 * dialect: `environment/status`, `environmentConfig/read` (the server's
 * `$CODEX_HOME`, trusted and untrusted projects, bad TOML, bad params) and
 * capability discovery (`capabilities/discoverV2`,
 * `capabilityRoots/discoverV1`) over a small fixture of skills and
 * plugins. fs/walk: codex_walk_test.ts; http/request: http_*_test.ts.
 */
import assert from "node:assert/strict";
import { mkdir, realpath, writeFile } from "node:fs/promises";
import os from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import type { Msg, TestServer } from "./harness.ts";
import { codexServer, withTempDir } from "./server_helpers.ts";

const uri = (path: string) => pathToFileURL(path).href;

/** A Codex-dialect server with `env` (HOME moved keeps Deno's cache where it was). */
function hostServer(env: Record<string, string>): Promise<TestServer> {
  const cache: Record<string, string> = process.env.DENO_DIR || process.env.XDG_CACHE_HOME
    ? {}
    : { DENO_DIR: join(os.homedir(), ".cache", "deno") };
  return codexServer({ env: { ...cache, ...env } });
}

/** Write `files` (path relative to `dir` → text) below `dir`. */
async function files(dir: string, all: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(all)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

/** The layers of a config answer that this test made (not a system file of the host). */
const ours = (result: Msg) =>
  result.config.layers.filter((l: Msg) => !l.source.startsWith("system ")).map((l: Msg) => [
    l.source,
    l.baseDir,
    l.toml,
  ]);

Deno.test("codex dialect: environment/status is ready", async () => {
  await using s = await hostServer({});
  assert.deepEqual(await s.call("environment/status", {}), { status: "ready" });
  assert.deepEqual(await s.call("environment/status"), { status: "ready" });
});

Deno.test("codex dialect: environmentConfig/read answers the server's own layers", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    const [home, trusted, untrusted] = ["codex-home", "trusted", "untrusted"].map((n) =>
      join(dir, n)
    );
    await files(dir, {
      "codex-home/config.toml": [
        `model = "o3"`,
        `[mcp_servers.x]`,
        `url = "http://127.0.0.1:9/mcp"`,
        `bearer_token_env_var = "TOK"`,
        `[projects."${trusted}"]`,
        `trust_level = "trusted"`,
        `[projects."${untrusted}"]`,
        `trust_level = "untrusted"`,
      ].join("\n"),
      "trusted/.codex/config.toml": `[mcp_servers.proj]\ncommand = "p"\n`,
      "untrusted/.codex/config.toml": `[mcp_servers.never]\ncommand = "n"\n`,
    });
    await using s = await hostServer({ CODEX_HOME: home });
    const read = (cwd: string, configPaths: string[][], requirementsPaths: string[][] = []) =>
      s.request("environmentConfig/read", { cwd, configPaths, requirementsPaths });
    const user = [
      `user (${home}/config.toml)`,
      uri(home),
      `[mcp_servers.x]\nurl = "http://127.0.0.1:9/mcp"\nbearer_token_env_var = "TOK"\n`,
    ];
    const got = (await read(uri(trusted), [["mcp_servers"]])).result;
    assert.equal(got.codexHomeDir, uri(home));
    assert.equal(got.userHomeDir, uri(os.homedir()));
    assert.equal(got.hostname, os.hostname());
    assert.deepEqual(ours(got), [
      user,
      [
        `project (${trusted}/.codex/config.toml)`,
        uri(`${trusted}/.codex`),
        `[mcp_servers.proj]\ncommand = "p"\n`,
      ],
    ]);
    assert.equal(typeof got.config.cloudInsertionIndex, "number");
    // An untrusted project's file is not a layer; plain paths are accepted too.
    assert.deepEqual(ours((await read(uri(untrusted), [["mcp_servers"]])).result), [user]);
    assert.deepEqual(ours((await read(untrusted, [["mcp_servers"]])).result), [user]);
    // Only what was asked, and no layer where nothing of it is present.
    assert.deepEqual(ours((await read(uri(untrusted), [["model"]])).result), [
      [user[0], user[1], `model = "o3"\n`],
    ]);
    assert.deepEqual(ours((await read(uri(trusted), [["nothing"]])).result), []);
  });
});

Deno.test("codex dialect: environmentConfig/read refuses bad params and bad files", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    await files(dir, { "good/config.toml": "model = 1\n", "bad/config.toml": "model = \n[x" });
    await using good = await hostServer({ CODEX_HOME: join(dir, "good") });
    const read = (s: TestServer, params: unknown) => s.request("environmentConfig/read", params);
    const cwd = uri(dir);
    const empty = await read(good, { cwd, configPaths: [], requirementsPaths: [] });
    assert.equal(empty.error?.code, -32602);
    assert.equal(empty.error.message, "at least one config or requirements path is required");
    const cases: [unknown, RegExp][] = [
      [{ cwd, configPaths: [[]], requirementsPaths: [] }, /at least one key segment/],
      [{ cwd, configPaths: [["a"]] }, /requirementsPaths/],
      [{ cwd, configPaths: "mcp_servers", requirementsPaths: [] }, /configPaths must be an array/],
      [{ cwd: "relative", configPaths: [["a"]], requirementsPaths: [] }, /cwd/],
      [null, /params must be an object/],
    ];
    for (const [params, message] of cases) {
      const res = await read(good, params);
      assert.equal(res.error?.code, -32602, JSON.stringify([params, res]));
      assert.match(res.error.message, message);
    }
    await using bad = await hostServer({ CODEX_HOME: join(dir, "bad") });
    const broken = await read(bad, { cwd, configPaths: [["model"]], requirementsPaths: [] });
    assert.equal(broken.error?.code, -32603);
    assert.ok(broken.error.message.startsWith("failed to load executor-local config: "));
    assert.ok(broken.error.message.includes(`${dir}/bad/config.toml`), broken.error.message);
    await using missing = await hostServer({ CODEX_HOME: join(dir, "missing") });
    const gone = await read(missing, { cwd, configPaths: [["model"]], requirementsPaths: [] });
    assert.equal(gone.error?.code, -32603);
    assert.match(gone.error.message, /^failed to find Codex home: .* does not exist$/);
  });
});

/**
 * A Codex home with one plugin in two versions and three skills (one in a
 * hidden directory, one without front matter), and a HOME with one skill.
 */
async function discoveryFixture(
  dir: string,
): Promise<{ home: string; user: string; plugin: string }> {
  const plugin = "codex-home/plugins/cache/mkt/plug";
  await files(dir, {
    [`${plugin}/1.2.0/.codex-plugin/plugin.json`]: `{"name":"old"}`,
    [`${plugin}/1.10.0/.codex-plugin/plugin.json`]: `{"name":"plug"}`,
    [`${plugin}/1.10.0/.mcp.json`]: `{"mcpServers":{}}`,
    [`${plugin}/1.10.0/skills/s2/SKILL.md`]: "---\nname: s2\ndescription: Skill two\n---\n",
    [`${plugin}/1.10.0/skills/s2/agents/openai.yaml`]: "interface: {}\n",
    "codex-home/skills/alpha/SKILL.md":
      "---\nname: alpha\ndescription: |\n  Does\n  A\nmetadata:\n  short-description: A short\n---\nbody\n",
    "codex-home/skills/.hid/beta/SKILL.md": `---\ndescription: "Beta thing"\n---\n`,
    "codex-home/skills/nofront/SKILL.md": "no front matter\n",
    "user/.agents/skills/gamma/SKILL.md":
      "---\nname: gamma\ndescription: >\n  folded\n  text\n---\n",
  });
  return { home: join(dir, "codex-home"), user: join(dir, "user"), plugin: join(dir, plugin) };
}

Deno.test("codex dialect: capabilities/discoverV2 lists the host's plugins and skills", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    const { home, user, plugin } = await discoveryFixture(dir);
    await using s = await hostServer({ CODEX_HOME: home, HOME: user });
    const got = await s.call("capabilities/discoverV2", { cwd: uri(dir), sandbox: null });
    const root = `${plugin}/1.10.0`;
    assert.deepEqual(got.plugins, [{
      id: "plug@mkt",
      displayName: "plug",
      remotePluginId: null,
      version: "1.10.0",
      root: uri(root),
      files: {
        manifest: { path: uri(`${root}/.codex-plugin/plugin.json`), contents: `{"name":"plug"}` },
        mcpConfig: { path: uri(`${root}/.mcp.json`), contents: `{"mcpServers":{}}` },
        appsConfig: null,
      },
      skills: [{
        name: "plug:s2",
        description: "Skill two",
        shortDescription: null,
        path: uri(`${root}/skills/s2/SKILL.md`),
        dependencies: null,
        policy: null,
      }],
    }]);
    const skills = got.skills.map((
      k: Msg,
    ) => [k.name, k.description, k.shortDescription, k.discoveryRoot]);
    const homeRoot = { id: "codex-home-skills", path: uri(`${home}/skills`) };
    assert.deepEqual(skills, [
      ["beta", "Beta thing", null, homeRoot],
      // White space runs in the fields become one space, as upstream reads them.
      ["alpha", "Does A", "A short", homeRoot],
      ["gamma", "folded text", null, {
        id: "user-agent-skills",
        path: uri(`${user}/.agents/skills`),
      }],
    ]);
    // The skill without front matter is left out, and said to be.
    assert.deepEqual(got.warnings, [
      "some capability metadata could not be loaded; discovery may be incomplete",
    ]);
  });
});

Deno.test("codex dialect: capabilityRoots/discoverV1 returns the raw files below each root", async () => {
  await withTempDir(async (tmp) => {
    const dir = await realpath(tmp);
    const { home, user, plugin } = await discoveryFixture(dir);
    await using s = await hostServer({ CODEX_HOME: home, HOME: user });
    const root = (id: string, path: string) => ({ id, path, sandbox: null });
    const { roots } = await s.call("capabilityRoots/discoverV1", {
      roots: [
        root("plugin", uri(`${plugin}/1.10.0`)),
        root("all-plugins", uri(`${home}/plugins`)),
        root("skills", uri(`${home}/skills`)),
        root("missing", uri(`${dir}/missing`)),
        root("file", uri(`${home}/skills/alpha/SKILL.md`)),
      ],
    });
    assert.deepEqual(roots.map((r: Msg) => r.id), [
      "plugin",
      "all-plugins",
      "skills",
      "missing",
      "file",
    ]);
    const [one, all, skills, missing, file] = roots;
    const manifest = (v: string) => uri(`${plugin}/${v}/.codex-plugin/plugin.json`);
    assert.equal(one.path, uri(`${plugin}/1.10.0`));
    assert.equal(one.plugin.manifest.path, manifest("1.10.0"));
    assert.equal(one.plugin.mcpConfig.contents, `{"mcpServers":{}}`);
    assert.deepEqual(one.namespaceManifests.map((m: Msg) => m.path), [manifest("1.10.0")]);
    assert.deepEqual(one.skills, [{
      instructions: {
        path: uri(`${plugin}/1.10.0/skills/s2/SKILL.md`),
        contents: "---\nname: s2\ndescription: Skill two\n---\n",
      },
      metadata: {
        path: uri(`${plugin}/1.10.0/skills/s2/agents/openai.yaml`),
        contents: "interface: {}\n",
      },
    }]);
    assert.equal(one.error, null);
    // Every plugin the walk finds names its manifest, skills or not, by path.
    assert.equal(all.plugin, null);
    assert.deepEqual(all.namespaceManifests.map((m: Msg) => m.path), [
      manifest("1.10.0"),
      manifest("1.2.0"),
    ]);
    // Skills below a root unparsed, the one without front matter too, hidden ones included.
    assert.deepEqual(skills.skills.map((k: Msg) => k.instructions.path), [
      uri(`${home}/skills/.hid/beta/SKILL.md`),
      uri(`${home}/skills/alpha/SKILL.md`),
      uri(`${home}/skills/nofront/SKILL.md`),
    ]);
    assert.deepEqual(skills.namespaceManifests, []);
    assert.match(
      missing.error,
      new RegExp(`^failed to inspect capability root ${uri(`${dir}/missing`)}: `),
    );
    assert.deepEqual([missing.plugin, missing.skills], [null, []]);
    assert.equal(
      file.error,
      `capability root ${uri(`${home}/skills/alpha/SKILL.md`)} is not a directory`,
    );
    const bad = await s.request("capabilityRoots/discoverV1", { roots: "all" });
    assert.equal(bad.error?.code, -32602);
  });
});
