import assert from "node:assert/strict";
import * as fsp from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse } from "smol-toml";
import { ErrorCode, RpcError } from "../protocol/errors.ts";
import {
  checkTomlPaths,
  type ConfigPlaces,
  hostConfigPlaces,
  readEnvironmentConfig,
  selectTomlPaths,
} from "./environment_config.ts";

const uri = (path: string) => pathToFileURL(path).href;
/** A layer's TOML as plain objects (the parser's tables have no prototype). */
const toml = (text: string): unknown => JSON.parse(JSON.stringify(parse(text)));

function rpcError(code: number, message: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  };
}

Deno.test("checkTomlPaths: arrays of non-empty string arrays, else -32602 naming the field", () => {
  assert.deepEqual(checkTomlPaths([], "configPaths"), []);
  assert.deepEqual(checkTomlPaths([["mcp_servers"], ["a", "b"]], "configPaths"), [
    ["mcp_servers"],
    ["a", "b"],
  ]);
  const bad = (value: unknown, message: RegExp) =>
    assert.throws(() => checkTomlPaths(value, "configPaths"), rpcError(-32602, message));
  bad(undefined, /^configPaths must be an array of key paths, got nothing$/);
  bad("mcp_servers", /configPaths must be an array/);
  bad(["mcp_servers"], /^configPaths\[0\] must be an array of strings, got "mcp_servers"$/);
  bad([["a"], ["b", 1]], /^configPaths\[1\] must be an array of strings/);
  bad([[]], /^configPaths\[0\]: TOML paths must contain at least one key segment$/);
});

Deno.test("selectTomlPaths: what the paths name, in the document's order", () => {
  const doc = {
    model: "o3",
    mcp_servers: { x: { url: "u", env: { A: "1" } }, y: { command: "c" } },
    projects: { "/p": { trust_level: "trusted" } },
  };
  assert.deepEqual(selectTomlPaths(doc, [["mcp_servers"]]), { mcp_servers: doc.mcp_servers });
  // Asked y then x, answered in the document's order; model after them here as in the doc.
  const picked = selectTomlPaths(doc, [["mcp_servers", "y"], ["model"], ["mcp_servers", "x"]]);
  assert.deepEqual(picked, { model: "o3", mcp_servers: doc.mcp_servers });
  assert.deepEqual(Object.keys(picked!), ["model", "mcp_servers"]);
  assert.deepEqual(Object.keys(picked!.mcp_servers as object), ["x", "y"]);
  assert.deepEqual(selectTomlPaths(doc, [["mcp_servers", "x", "url"]]), {
    mcp_servers: { x: { url: "u" } },
  });
  // A shorter path takes the whole subtree, whatever a longer one asks below it.
  assert.deepEqual(selectTomlPaths(doc, [["mcp_servers"], ["mcp_servers", "x", "url"]]), {
    mcp_servers: doc.mcp_servers,
  });
});

Deno.test("selectTomlPaths: upstream's partial matches (first key present)", () => {
  const doc = { model: "o3", mcp_servers: { x: { url: "u" } } };
  assert.equal(selectTomlPaths(doc, [["nothing"]]), undefined);
  assert.equal(selectTomlPaths(doc, [["nothing", "x"]]), undefined);
  assert.equal(selectTomlPaths(doc, []), undefined);
  // The tables on the way are there, what is asked below them is not: they come empty.
  assert.deepEqual(selectTomlPaths(doc, [["mcp_servers", "zzz"]]), { mcp_servers: {} });
  assert.deepEqual(selectTomlPaths(doc, [["mcp_servers", "x", "zzz"]]), {
    mcp_servers: { x: {} },
  });
  // A value that is not a table where the path goes on is taken whole.
  assert.deepEqual(selectTomlPaths(doc, [["model", "x"]]), { model: "o3" });
  assert.deepEqual(selectTomlPaths(doc, [["mcp_servers", "x", "url", "deeper"]]), {
    mcp_servers: { x: { url: "u" } },
  });
});

Deno.test("hostConfigPlaces: $CODEX_HOME when set and not empty, else ~/.codex", () => {
  assert.deepEqual(hostConfigPlaces({ CODEX_HOME: "/srv/codex" }), {
    systemDir: "/etc/codex",
    codexHome: "/srv/codex",
    codexHomeFromEnv: true,
  });
  for (const env of [{}, { CODEX_HOME: "" }]) {
    assert.deepEqual(hostConfigPlaces(env), {
      systemDir: "/etc/codex",
      codexHome: join(os.homedir(), ".codex"),
      codexHomeFromEnv: false,
    });
  }
});

interface Fixture {
  places: ConfigPlaces;
  home: string;
  system: string;
  project: string;
  dir: string;
}

/** A system dir, a Codex home and a project, each with what `files` puts there. */
async function withConfig(
  files: { system?: string; requirements?: string; user?: string; project?: string },
  fn: (f: Fixture) => Promise<void>,
): Promise<void> {
  const dir = await fsp.realpath(await fsp.mkdtemp(`${os.tmpdir()}/env-config-test-`));
  const [system, home, project] = ["etc-codex", "codex-home", "proj"].map((n) => join(dir, n));
  for (const d of [system, home, join(project, ".codex")]) await fsp.mkdir(d, { recursive: true });
  const write = (path: string, text: string | undefined) =>
    text === undefined ? undefined : fsp.writeFile(path, text.replaceAll("$PROJECT", project));
  await write(join(system, "config.toml"), files.system);
  await write(join(system, "requirements.toml"), files.requirements);
  await write(join(home, "config.toml"), files.user);
  await write(join(project, ".codex", "config.toml"), files.project);
  try {
    await fn({ places: { systemDir: system, codexHome: home }, home, system, project, dir });
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

const USER = `model = "o3"

[mcp_servers.x]
url = "http://127.0.0.1:9/mcp"

[projects."$PROJECT"]
trust_level = "trusted"
`;
const PROJECT = `[mcp_servers.proj]\ncommand = "p"\n`;

Deno.test("readEnvironmentConfig: system, user and a trusted project's layers, in order", async () => {
  const files = {
    system: `[mcp_servers.sys]\ncommand = "s"\n`,
    requirements: `[mcp_servers]\nallowed = ["x"]\nother = 1\n`,
    user: USER,
    project: PROJECT,
  };
  await withConfig(files, async ({ places, home, system, project }) => {
    const got = await readEnvironmentConfig(places, project, [["mcp_servers"]], [[
      "mcp_servers",
      "allowed",
    ]]);
    assert.equal(got.userHomeDir, uri(os.homedir()));
    assert.equal(got.codexHomeDir, uri(home));
    assert.equal(got.hostname, os.hostname());
    const layers = got.config.layers.map((l) => [l.source, l.baseDir, toml(l.toml)]);
    assert.deepEqual(layers, [
      [`system (${system}/config.toml)`, uri(system), { mcp_servers: { sys: { command: "s" } } }],
      [`user (${home}/config.toml)`, uri(home), {
        mcp_servers: { x: { url: "http://127.0.0.1:9/mcp" } },
      }],
      [`project (${project}/.codex/config.toml)`, uri(`${project}/.codex`), {
        mcp_servers: { proj: { command: "p" } },
      }],
    ]);
    // The cloud layer goes after the system layer, as upstream counts it.
    assert.equal(got.config.cloudInsertionIndex, 1);
    assert.deepEqual(got.requirements.layers.map((l) => [l.source, toml(l.toml)]), [
      [`${system}/requirements.toml`, { mcp_servers: { allowed: ["x"] } }],
    ]);
    assert.equal(got.requirements.cloudInsertionIndex, 1);
  });
});

Deno.test("readEnvironmentConfig: layers without a match and missing files are left out", async () => {
  await withConfig({ user: USER, project: PROJECT }, async ({ places, home, project }) => {
    const got = await readEnvironmentConfig(places, project, [["model"]], [["anything"]]);
    assert.deepEqual(got.config.layers.map((l) => [l.source, l.toml]), [
      [`user (${home}/config.toml)`, `model = "o3"\n`],
    ]);
    assert.equal(got.config.cloudInsertionIndex, 0);
    assert.deepEqual(got.requirements, { layers: [], cloudInsertionIndex: 0 });
    // Only requirements asked: no config layer at all.
    const req = await readEnvironmentConfig(places, project, [], [["mcp_servers"]]);
    assert.deepEqual(req.config, { layers: [], cloudInsertionIndex: 0 });
  });
});

Deno.test("readEnvironmentConfig: the project layer needs the user's trust", async () => {
  const untrusted = USER.replace(`"trusted"`, `"untrusted"`);
  await withConfig({ user: untrusted, project: PROJECT }, async ({ places, project }) => {
    const got = await readEnvironmentConfig(places, project, [["mcp_servers"]], []);
    assert.deepEqual(got.config.layers.map((l) => l.source.split(" ")[0]), ["user"]);
  });
  await withConfig({ project: PROJECT }, async ({ places, project }) => {
    const got = await readEnvironmentConfig(places, project, [["mcp_servers"]], []);
    assert.deepEqual(got.config.layers, [], "no user file, no trust");
  });
});

Deno.test("readEnvironmentConfig: trust holds through a symlink or a trailing slash", async () => {
  await withConfig({ user: USER, project: PROJECT }, async ({ places, project, dir }) => {
    const link = join(dir, "link");
    await fsp.symlink(project, link);
    const sources = async (cwd: string) =>
      (await readEnvironmentConfig(places, cwd, [["mcp_servers"]], [])).config.layers
        .map((l) => l.source);
    // As upstream: trusted by its real path, named by the path asked.
    assert.deepEqual((await sources(link)).at(-1), `project (${link}/.codex/config.toml)`);
    assert.deepEqual(
      (await sources(`${project}/`)).at(-1),
      `project (${project}/.codex/config.toml)`,
    );
    assert.deepEqual(
      (await sources(`${dir}//proj/.`)).at(-1),
      `project (${project}/.codex/config.toml)`,
    );
  });
});

Deno.test("readEnvironmentConfig: bad TOML is -32603 naming the file and the place", async () => {
  await withConfig({ user: "model = \n[x" }, async ({ places, home, project }) => {
    await assert.rejects(
      readEnvironmentConfig(places, project, [["mcp_servers"]], []),
      rpcError(
        ErrorCode.InternalError,
        new RegExp(`^failed to load executor-local config: ${home}/config\\.toml:\\d+:\\d+: `),
      ),
    );
  });
  // A trusted project's file is read, so its errors count; an untrusted one's are never seen.
  await withConfig({ user: USER, project: "bad = [\n" }, async ({ places, project }) => {
    await assert.rejects(
      readEnvironmentConfig(places, project, [["mcp_servers"]], []),
      rpcError(ErrorCode.InternalError, /\.codex\/config\.toml/),
    );
    await fsp.writeFile(join(places.codexHome, "config.toml"), "model = 1\n"); // no trust now
    const got = await readEnvironmentConfig(places, project, [["model"]], []);
    assert.equal(got.config.layers.length, 1);
  });
});

Deno.test("readEnvironmentConfig: both lists empty is -32602", async () => {
  await withConfig({ user: USER }, async ({ places, project }) => {
    await assert.rejects(
      readEnvironmentConfig(places, project, [], []),
      rpcError(-32602, /^at least one config or requirements path is required$/),
    );
  });
});

Deno.test("readEnvironmentConfig: $CODEX_HOME must be a directory, answered by its real path", async () => {
  await withConfig({ user: USER }, async ({ places, home, project, dir }) => {
    const link = join(dir, "home-link");
    await fsp.symlink(home, link);
    const fromEnv = (codexHome: string): ConfigPlaces => ({
      ...places,
      codexHome,
      codexHomeFromEnv: true,
    });
    const got = await readEnvironmentConfig(fromEnv(link), project, [["model"]], []);
    assert.equal(got.codexHomeDir, uri(home));
    assert.equal(got.config.layers[0].source, `user (${home}/config.toml)`);
    await assert.rejects(
      readEnvironmentConfig(fromEnv(join(dir, "missing")), project, [["model"]], []),
      rpcError(
        ErrorCode.InternalError,
        /^failed to find Codex home: CODEX_HOME points to ".*missing", but that path does not exist$/,
      ),
    );
    await assert.rejects(
      readEnvironmentConfig(fromEnv(join(home, "config.toml")), project, [["model"]], []),
      rpcError(ErrorCode.InternalError, /but that path is not a directory$/),
    );
    // ~/.codex (not from the environment) need not exist.
    const absent = { ...places, codexHome: join(dir, "missing") };
    const none = await readEnvironmentConfig(absent, project, [["model"]], []);
    assert.equal(none.codexHomeDir, uri(join(dir, "missing")));
    assert.deepEqual(none.config.layers, []);
  });
});
