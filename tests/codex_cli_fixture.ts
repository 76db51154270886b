/**
 * Driving the real Codex CLI 0.171 against this server: a local mock of
 * the model (the Responses API's server-sent events, scripted step by
 * step), a CODEX_HOME that points the CLI at it and at an exec-server, and
 * a websocket relay that records the traffic and can cut the connection.
 *
 * The CLI is found through CODEX_CLI_BIN, or where `.ci/run` installs it
 * (`~/.cache/exec-server-ci/codex/node_modules/.bin/codex`).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { WebSocket, WebSocketServer } from "ws";
import { type Msg, waitForMessage } from "./harness.ts";
import { WsServer } from "./ws_fixture.ts";

/** Where `.ci/run` installs the CLI, outside the package's dependencies. */
export const CODEX_CACHE: string = join(homedir(), ".cache/exec-server-ci/codex");

/** The codex binary, or undefined when it is not installed here. */
export function codexBinary(): string | undefined {
  const candidates = [
    process.env.CODEX_CLI_BIN,
    join(CODEX_CACHE, "node_modules/.bin/codex"),
  ];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

/** One scripted answer of the mock model: a tool call, or a final message. */
export type Step =
  | {
    call: string;
    /** The tool's namespace (an MCP server's tools: `mcp__NAME`), when it has one. */
    namespace?: string;
    /** The arguments, or a function of the tool outputs received so far (by call id). */
    args: Record<string, unknown> | ((outputs: Map<string, string>) => Record<string, unknown>);
  }
  | { say: string };

const USAGE = {
  input_tokens: 0,
  input_tokens_details: null,
  output_tokens: 0,
  output_tokens_details: null,
  total_tokens: 0,
};

/** A Responses API endpoint that answers each request with the next step. */
export class MockModel {
  readonly requests: Msg[] = [];
  #steps: Step[];
  #server: http.Server;
  url = "";

  constructor(steps: Step[]) {
    this.#steps = steps;
    this.#server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (d) => body += d);
      req.on("end", () => this.#answer(body, res));
    });
  }

  /** Listen on loopback. */
  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
    return this;
  }

  /** The outputs of the tool calls, as the model received them, by call id. */
  toolOutputs(): Map<string, string> {
    const out = new Map<string, string>();
    for (const r of this.requests) {
      for (const item of r.input ?? []) {
        if (item.type === "function_call_output") {
          out.set(
            item.call_id,
            typeof item.output === "string" ? item.output : JSON.stringify(item.output),
          );
        }
      }
    }
    return out;
  }

  close(): Promise<void> {
    return new Promise((r) => this.#server.close(() => r()));
  }

  #answer(body: string, res: http.ServerResponse): void {
    this.requests.push(JSON.parse(body));
    const n = this.requests.length;
    const step = this.#steps[Math.min(n - 1, this.#steps.length - 1)];
    const item = "call" in step
      ? {
        type: "function_call",
        name: step.call,
        ...(step.namespace ? { namespace: step.namespace } : {}),
        arguments: JSON.stringify(
          typeof step.args === "function" ? step.args(this.toolOutputs()) : step.args,
        ),
        call_id: `call_${n}`,
      }
      : {
        type: "message",
        role: "assistant",
        id: `m${n}`,
        content: [{ type: "output_text", text: step.say }],
      };
    const events = [
      { type: "response.created", response: { id: `r${n}` } },
      { type: "response.output_item.done", item },
      { type: "response.completed", response: { id: `r${n}`, usage: USAGE } },
    ];
    res.setHeader("content-type", "text/event-stream");
    res.end(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));
  }
}

/** How the CLI reaches the exec-server (environments.toml's entry). */
export type EnvironmentEntry =
  | { url: string; token?: string }
  | { program: string; args: string[] };

/** A CODEX_HOME whose config.toml uses the mock model, then `extraConfig`'s lines. */
export async function mockModelHome(model: MockModel, extraConfig: string[] = []): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), "codex-home-"));
  await writeFile(
    join(home, "config.toml"),
    [
      `model = "gpt-5"`,
      `model_provider = "mock"`,
      `[model_providers.mock]`,
      `name = "mock"`,
      `base_url = "${model.url}"`,
      `wire_api = "responses"`,
      ...extraConfig,
    ].join("\n") + "\n",
  );
  return home;
}

/**
 * A CODEX_HOME with the mock model and one remote environment, include_local = false;
 * `extraConfig` lines are appended to its config.toml.
 */
export async function codexHome(
  model: MockModel,
  env: EnvironmentEntry,
  extraConfig: string[] = [],
): Promise<string> {
  const home = await mockModelHome(model, extraConfig);
  const entry = "url" in env
    ? [
      `url = ${JSON.stringify(env.url)}`,
      ...(env.token ? [`auth_bearer_token = ${JSON.stringify(env.token)}`] : []),
    ]
    : [`program = ${JSON.stringify(env.program)}`, `args = ${JSON.stringify(env.args)}`];
  await writeFile(
    join(home, "environments.toml"),
    [`default = "box"`, `include_local = false`, `[[environments]]`, `id = "box"`, ...entry].join(
      "\n",
    ) +
      "\n",
  );
  return home;
}

/** What `codex exec` did. */
export interface CodexRun {
  code: number | null;
  output: string;
}

/** Run `codex exec` in `cwd` with `home`; the sandbox flag defaults to danger-full-access. */
export function runCodex(
  home: string,
  cwd: string,
  prompt: string,
  sandbox = "danger-full-access",
  timeoutMs = 90_000,
  extraEnv: Record<string, string> = {},
): Promise<CodexRun> {
  const bin = codexBinary()!;
  const child = spawn(bin, [
    "exec",
    "--skip-git-repo-check",
    "-c",
    "approval_policy=never",
    "-s",
    sandbox,
    prompt,
  ], {
    cwd,
    env: {
      ...process.env,
      CODEX_HOME: home,
      OPENAI_API_KEY: "test",
      CODEX_EXEC_SERVER_URL: "",
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => output += d);
  child.stderr!.on("data", (d) => output += d);
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve) => {
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * A websocket relay between the CLI and the server: it records every
 * message in both directions and can cut the client's connection.
 */
export class Relay {
  readonly traffic: { from: "client" | "server"; msg: Msg }[] = [];
  url = "";
  #wss: WebSocketServer;
  #clients = new Set<WebSocket>();

  constructor(target: string, headers: Record<string, string> = {}) {
    this.#wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    this.#wss.on("connection", (client) => {
      this.#clients.add(client);
      const upstream = new WebSocket(target, { headers });
      const pending: string[] = [];
      upstream.on("open", () => pending.splice(0).forEach((m) => upstream.send(m)));
      client.on("message", (data) => {
        const text = String(data);
        this.#record("client", text);
        if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
        else pending.push(text);
      });
      upstream.on("message", (data) => {
        const text = String(data);
        this.#record("server", text);
        if (client.readyState === WebSocket.OPEN) client.send(text);
      });
      const end = () => {
        this.#clients.delete(client);
        client.terminate();
        upstream.terminate();
      };
      client.on("close", end);
      upstream.on("close", end);
      client.on("error", end);
      upstream.on("error", end);
    });
  }

  /** Listen on loopback. */
  async start(): Promise<this> {
    await new Promise<void>((r) => this.#wss.once("listening", () => r()));
    this.url = `ws://127.0.0.1:${(this.#wss.address() as AddressInfo).port}`;
    return this;
  }

  /** Drop every connection at once, as a network failure would. */
  cut(): void {
    for (const c of this.#clients) c.terminate();
  }

  /** The messages of `method` seen so far. */
  seen(method: string): Msg[] {
    return this.traffic.filter((t) => t.msg.method === method).map((t) => t.msg);
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((r) => this.#wss.close(() => r()));
  }

  #record(from: "client" | "server", text: string): void {
    try {
      this.traffic.push({ from, msg: JSON.parse(text) });
    } catch {
      // Not JSON: the server's answer to it is recorded.
    }
  }
}

/** A scratch workspace directory, removed by the returned function. */
export async function workspace(): Promise<[string, () => Promise<void>]> {
  const dir = await mkdtemp(join(tmpdir(), "codex-work-"));
  await mkdir(dir, { recursive: true });
  return [dir, () => rm(dir, { recursive: true, force: true })];
}

/** A raw JSON-RPC client on a websocket, speaking the Codex dialect by hand. */
export class CodexWs {
  readonly messages: Msg[] = [];
  #listeners = new Set<() => void>();
  #socket: WebSocket;
  #nextId = 1;
  #closed = false;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on("message", (data) => {
      this.messages.push(JSON.parse(String(data)));
      for (const l of [...this.#listeners]) l();
    });
    socket.on("close", () => {
      this.#closed = true;
      for (const l of [...this.#listeners]) l();
    });
  }

  /** Open a socket to `url`; rejects with the HTTP status when refused. */
  static async open(url: string, token: string | undefined): Promise<CodexWs> {
    const socket = new WebSocket(url, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once(
        "unexpected-response",
        (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)),
      );
      socket.once("error", reject);
    });
    return new CodexWs(socket);
  }

  /** `initialize` (with `resumeSessionId`) then `initialized`; the answer. */
  async initialize(resumeSessionId: string | null): Promise<Msg> {
    const answer = await this.request("initialize", {
      clientName: "codex-environment",
      resumeSessionId,
    });
    if (answer.result) this.notify("initialized", {});
    return answer;
  }

  /** Send a request and wait for its answer. */
  request(method: string, params: unknown, timeoutMs = 20_000): Promise<Msg> {
    const id = this.#nextId++;
    this.#socket.send(JSON.stringify({ id, method, params }));
    return this.waitFor((m) => m.id === id && !("method" in m), timeoutMs);
  }

  /** Send a notification. */
  notify(method: string, params: unknown): void {
    this.#socket.send(JSON.stringify({ method, params }));
  }

  /** The first message satisfying `pred`. */
  waitFor(pred: (m: Msg) => boolean, timeoutMs = 20_000): Promise<Msg> {
    return waitForMessage({
      messages: this.messages,
      listeners: this.#listeners,
      pred,
      timeoutMs,
      failed: () => this.#closed ? new Error("the socket closed") : undefined,
      timedOut: () => new Error(`timed out; got ${JSON.stringify(this.messages).slice(-500)}`),
    });
  }

  /** Drop the connection without a closing handshake. */
  drop(): void {
    this.#socket.terminate();
  }
}

/**
 * A websocket server that wants `token`, started with `cmd` and `extra`
 * flags; the returned function stops it and removes its token file.
 */
export async function startTokenServer(
  token: string,
  extra: string[] = [],
  cmd?: string[],
): Promise<[WsServer, () => Promise<void>]> {
  const [dir, cleanup] = await workspace();
  await writeFile(join(dir, "token"), token, { mode: 0o600 });
  const server = await WsServer.start(
    ["--listen", "ws://127.0.0.1:0", "--token-file", join(dir, "token"), ...extra],
    cmd,
  );
  return [server, async () => {
    await server.stop();
    await cleanup();
  }];
}
