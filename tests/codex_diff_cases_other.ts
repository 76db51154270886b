/**
 * The differential test's cases beyond processes and files (see
 * tests/codex_diff_fixture.ts): `initialize`, `environment/info` and
 * `environment/status`, `environmentConfig/read`, capability discovery,
 * `http/request` against a loopback server of the test's own, and an
 * unknown method.
 */
import { Buffer } from "node:buffer";
import * as fsp from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { CaseCtx, DiffCase } from "./codex_diff_fixture.ts";
import { b64, type Msg, unb64 } from "./harness.ts";

/** Fields of `environmentInfo` that are the same host's on both sides. */
const INFO_EXACT = [
  "shell",
  "executorVersion",
  "cwd",
  "userHomeDir",
  "platformOs",
  "temporaryDirectories",
  "tempDir",
  "capabilities",
];

const initialize: DiffCase = {
  name: "initialize",
  async run(c) {
    const { id: _id, ...init } = c.init;
    c.record("the handshake", init, INFO_EXACT.map((f) => `result.environmentInfo.${f}`));
    await c.req("environment/info", "environment/info", {}, INFO_EXACT.map((f) => `result.${f}`));
    await c.req("environment/info, no params", "environment/info", undefined, ["result.shell"]);
    await c.req("environment/info, params", "environment/info", { zz: 1 });
    await c.req("environment/status", "environment/status", {}, true);
    await c.req("environment/status, params", "environment/status", { zz: 1 });
    await c.req("initialize again", "initialize", {
      clientName: "codex-environment",
      resumeSessionId: null,
    });
    await c.req("initialize, unknown session", "initialize", {
      clientName: "codex-environment",
      resumeSessionId: "00000000-0000-4000-8000-000000000000",
    });
    await c.req("unknown method", "nope/nothing", {}, ["error.code"]);
    await c.req("unknown method, no params", "fs/unwatch", undefined, ["error.code"]);
  },
};

const CODEX_INIT = { clientName: "codex-environment", resumeSessionId: null };

/** A connection's first messages, on a server of its own. */
const handshake: DiffCase = {
  name: "handshake",
  fresh: true,
  async run(c) {
    await c.req("a request before initialize", "environment/status", {});
    await c.req("initialize", "initialize", CODEX_INIT, ["result.environmentInfo.shell"]);
    const discover = { cwd: c.u(), sandbox: null };
    await c.req("discovery before initialized", "capabilities/discoverV2", discover);
    await c.req("a file before initialized", "fs/getMetadata", { path: c.u(), sandbox: null });
    c.server.notify("initialized", {});
    await c.req("discovery after initialized", "capabilities/discoverV2", discover, [
      "result.plugins",
    ]);
  },
};

/** An `initialize` with bad params, as the first message of a connection, then a good one. */
function badInitialize(name: string, params: unknown): DiffCase {
  return {
    name: `handshake, ${name}`,
    fresh: true,
    async run(c) {
      await c.req("initialize", "initialize", params);
      await c.req("initialize again, well formed", "initialize", CODEX_INIT);
    },
  };
}

/** A resume of a session neither server knows. */
const unknownSession: DiffCase = {
  name: "handshake, unknown session",
  fresh: true,
  async run(c) {
    await c.req("initialize", "initialize", {
      ...CODEX_INIT,
      resumeSessionId: "00000000-0000-4000-8000-000000000000",
    });
    await c.req("then a request", "environment/status", {});
  },
};

/** The user's config, trusting the case's tree (whose own config adds a server). */
async function configFixture(tree: string, codexHome: string): Promise<void> {
  await fsp.writeFile(
    join(codexHome, "config.toml"),
    [
      'model = "m"',
      "[mcp_servers.x]",
      'url = "http://127.0.0.1:9/mcp"',
      "[mcp_servers.x.http_headers]",
      'X-Test = "1"',
      `[projects."${tree}"]`,
      'trust_level = "trusted"',
      `[projects."${tree}/repo"]`,
      'trust_level = "trusted"',
      "",
    ].join("\n"),
  );
  await fsp.mkdir(join(tree, ".codex"));
  await fsp.writeFile(
    join(tree, ".codex/config.toml"),
    '[mcp_servers.y]\nurl = "http://127.0.0.1:9/y"\n',
  );
  await fsp.mkdir(join(tree, "untrusted"));
  // A repository: its root's trust and every .codex from there down to cwd.
  await fsp.mkdir(join(tree, "repo/.git"), { recursive: true });
  await fsp.writeFile(join(tree, "repo/.git/HEAD"), "ref: refs/heads/main\n");
  for (const [dir, name] of [["repo", "r"], ["repo/sub", "s"]]) {
    await fsp.mkdir(join(tree, dir, ".codex"), { recursive: true });
    await fsp.writeFile(
      join(tree, dir, ".codex/config.toml"),
      `[mcp_servers.${name}]\nurl = "u"\n`,
    );
  }
  await fsp.mkdir(join(tree, "repo/sub/deep"));
}

const environmentConfig: DiffCase = {
  name: "environmentConfig/read",
  setup: configFixture,
  async run(c) {
    const read = (label: string, params: unknown) =>
      c.req(label, "environmentConfig/read", params, ["result"]);
    const mcp = [["mcp_servers"]];
    await read("trusted project", { cwd: c.u(), configPaths: mcp, requirementsPaths: [] });
    await read("untrusted cwd", { cwd: c.u("untrusted"), configPaths: mcp, requirementsPaths: [] });
    await read("inside a repository", {
      cwd: c.u("repo/sub/deep"),
      configPaths: mcp,
      requirementsPaths: [],
    });
    await read("a deeper path", {
      cwd: c.u(),
      configPaths: [["mcp_servers", "x", "url"], ["model"]],
      requirementsPaths: [["allowed_sandbox_modes"]],
    });
    await read("absent keys", { cwd: c.u(), configPaths: [["nope"]], requirementsPaths: [] });
    await read("both lists empty", { cwd: c.u(), configPaths: [], requirementsPaths: [] });
    await read("an empty key path", { cwd: c.u(), configPaths: [[]], requirementsPaths: [] });
    await read("configPaths not an array", { cwd: c.u(), configPaths: "x", requirementsPaths: [] });
    await read("no cwd", { configPaths: mcp, requirementsPaths: [] });
    await read("no params", undefined);
    await fsp.writeFile(join(c.codexHome, "config.toml"), "[mcp_servers\nurl = 1\n");
    await read("bad TOML", { cwd: c.u(), configPaths: mcp, requirementsPaths: [] });
    await fsp.rm(join(c.codexHome, "config.toml"));
    await read("no config file", { cwd: c.u(), configPaths: mcp, requirementsPaths: [] });
  },
};

/** A `SKILL.md` with front matter. */
const skill = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n`;

/** Write `files` (relative path → text) below `dir`. */
async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await fsp.mkdir(join(dir, rel, ".."), { recursive: true });
    await fsp.writeFile(join(dir, rel), text);
  }
}

/**
 * Skills under `$CODEX_HOME/skills` and an installed plugin, written before
 * the servers start: upstream reads its plugin cache as it starts, and one
 * written meanwhile may be missed (it was, now and then).
 */
export async function discoveryCodexHome(codexHome: string): Promise<void> {
  const plugin = "plugins/cache/market/plug/1.0.0";
  await writeFiles(codexHome, {
    "skills/foo/SKILL.md": skill("foo", "Does foo things."),
    "skills/.hidden/h/SKILL.md": skill("hidden", "In a hidden directory."),
    "skills/broken/SKILL.md": "no front matter here\n",
    [`${plugin}/.codex-plugin/plugin.json`]: JSON.stringify({ name: "plug", version: "1.0.0" }),
    [`${plugin}/skills/baz/SKILL.md`]: skill("baz", "A plugin's skill."),
    [`${plugin}/.mcp.json`]: JSON.stringify({ mcpServers: {} }),
  });
}

/** A project's `.agents/skills` and a plugin directory of its own. */
async function discoveryFixture(tree: string): Promise<void> {
  await writeFiles(tree, {
    ".agents/skills/bar/SKILL.md": skill("bar", "A project skill."),
    ".agents/skills/bar/agents/openai.yaml": "interface:\n  display_name: Bar\n",
    "plugin/.codex-plugin/plugin.json": JSON.stringify({ name: "local" }),
    "plugin/skills/qux/SKILL.md": skill("qux", "Local plugin skill."),
    "a-file": "x",
  });
}

const discovery: DiffCase = {
  name: "capability discovery",
  setup: discoveryFixture,
  async run(c) {
    await c.req("discoverV2", "capabilities/discoverV2", { cwd: c.u(), sandbox: null }, [
      "result",
    ]);
    await c.req("discoverV2, no cwd", "capabilities/discoverV2", { sandbox: null });
    const root = (id: string, path: string) => ({ id, path: c.u(path), sandbox: null });
    await c.req("discoverV1", "capabilityRoots/discoverV1", {
      roots: [
        root("project", ".agents/skills"),
        root("plugin", "plugin"),
        root("missing", "missing"),
        root("file", "a-file"),
      ],
    }, ["result"]);
    await c.req("discoverV1, no roots", "capabilityRoots/discoverV1", {});
    await c.req("discoverV1, a root without id", "capabilityRoots/discoverV1", {
      roots: [{ path: c.u(), sandbox: null }],
    });
    await c.req("discoverV1, empty", "capabilityRoots/discoverV1", { roots: [] }, ["result"]);
  },
};

/**
 * A loopback origin: `/hello`, `/redirect`, `/chunks` (a body in parts),
 * `/echo`, and `/hold/T`, answered `released` once `/release/T` has been
 * asked for, or `timed out` after 3 s (a bound for a client that never
 * asks, not a delay anything waits for).
 */
export class DiffOrigin {
  readonly server: http.Server;
  url = "";
  #held = new Map<string, () => void>();

  constructor() {
    this.server = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => this.#answer(req, Buffer.concat(parts).toString(), res));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  #answer(req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
    const path = new URL(req.url!, "http://x").pathname;
    const [, verb, token] = /^\/(hold|release)\/(.+)$/.exec(path) ?? [];
    if (verb === "hold") {
      const timer = setTimeout(() => answer("timed out"), 3_000);
      const answer = (text: string) => {
        clearTimeout(timer);
        this.#held.delete(token);
        res.end(text);
      };
      this.#held.set(token, () => answer("released"));
    } else if (verb === "release") {
      this.#held.get(token)?.();
      res.end("ok");
    } else if (path === "/hello") {
      res.writeHead(200, { "content-type": "text/plain", "x-one": "1" });
      res.end("hello");
    } else if (path === "/redirect") {
      res.writeHead(302, { location: "/hello" });
      res.end("moved");
    } else if (path === "/chunks") {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const send = (i: number) => {
        if (i === 4) res.end("end");
        else res.write(`part${i};`, () => send(i + 1));
      };
      send(0);
    } else if (path === "/echo") {
      res.writeHead(201, { "content-type": "application/json" });
      res.end(JSON.stringify({ method: req.method, body, test: req.headers["x-test"] ?? null }));
    } else {
      res.writeHead(404);
      res.end("not found");
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** A response's status, headers but `date`, and body as text. */
function httpAnswer(answer: Msg): Msg {
  if (!answer.result) return { error: answer.error };
  const { status, headers, bodyBase64 } = answer.result;
  const kept = (headers as Msg[]).filter((h) => h.name !== "date" && h.name !== "keep-alive");
  return { result: { ...answer.result, headers: kept }, status, body: unb64(bodyBase64) };
}

/** A streamed request: its answer and its body reassembled from the notifications. */
async function streamed(c: CaseCtx, label: string, params: Msg): Promise<void> {
  const answer = await c.server.request("http/request", { ...params, streamResponse: true });
  c.record(label, httpAnswer(answer), ["status", "body"]);
  if (answer.error) return;
  const mine = (m: Msg) =>
    m.method === "http/request/bodyDelta" && m.params.requestId === params.requestId;
  await c.waitFor((m) => mine(m) && m.params.done, `the last bodyDelta of ${params.requestId}`);
  const deltas = c.server.messages.filter(mine).map((m) => m.params);
  c.record(`${label}: body`, {
    body: deltas.map((d) => unb64(d.deltaBase64)).join(""),
    seqsFromOne: deltas.every((d, i) => d.seq === i + 1),
    onlyLastDone: deltas.every((d, i) => d.done === (i === deltas.length - 1)),
    lastError: deltas.at(-1).error,
  }, true);
  c.record(`${label}: a delta`, deltas[0]);
}

/** The http/request case, against `origin`. */
function httpCase(origin: DiffOrigin): DiffCase {
  return {
    name: "http/request",
    async run(c) {
      const req = (label: string, params: Msg) =>
        c.server.request("http/request", params).then((a) =>
          c.record(label, httpAnswer(a), ["status", "body", "result.headers"])
        );
      const get = (path: string, requestId: string, extra: Msg = {}) => ({
        method: "GET",
        url: `${origin.url}${path}`,
        headers: [],
        requestId,
        ...extra,
      });
      await req("buffered GET", get("/hello", "r1"));
      await req("404", get("/missing", "r2"));
      await req("redirect followed", get("/redirect", "r3", { redirectPolicy: "follow" }));
      await req("redirect stopped", get("/redirect", "r4", { redirectPolicy: "stop" }));
      await req("POST with a body and headers", {
        ...get("/echo", "r5"),
        method: "POST",
        headers: [{ name: "x-test", value: "yes" }, { name: "content-type", value: "text/plain" }],
        bodyBase64: b64("the body"),
      });
      await streamed(c, "streamed", get("/chunks", "s1"));
      await streamed(c, "streamed redirect", get("/redirect", "s2", { redirectPolicy: "follow" }));
      await req("a file URL", get("", "e1", { url: "file:///etc/hostname" }));
      await req("not a URL", get("", "e2", { url: "not a url" }));
      await req("no requestId", { ...get("/hello", ""), requestId: undefined });
      await req("no method", { ...get("/hello", "e3"), method: undefined });
      await req("bad redirectPolicy", get("/hello", "e4", { redirectPolicy: "sometimes" }));
      await req("bad base64 body", get("/echo", "e5", { method: "POST", bodyBase64: "%%%" }));
      await req("a closed port", get("", "e6", { url: "http://127.0.0.1:9/" }));
      // Concurrency: a held request, then the one that releases it.
      const token = encodeURIComponent(c.codexHome);
      const held = c.server.request("http/request", get(`/hold/${token}`, "h1"));
      await req("the releasing request", get(`/release/${token}`, "h2"));
      c.record("the held request", httpAnswer(await held), ["status", "body"]);
    },
  };
}

/** The cases of this file; `origin` serves the http/request case. */
export function otherCases(origin: DiffOrigin): DiffCase[] {
  return [
    initialize,
    handshake,
    badInitialize("no clientName", { resumeSessionId: null }),
    badInitialize("clientName a number", { ...CODEX_INIT, clientName: 1 }),
    badInitialize("no params", undefined),
    badInitialize("resumeSessionId a number", { ...CODEX_INIT, resumeSessionId: 5 }),
    unknownSession,
    environmentConfig,
    discovery,
    httpCase(origin),
  ];
}
