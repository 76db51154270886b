/**
 * A bare MCP client for the `exec-server mcp` tests, speaking the wire
 * itself (newline-delimited JSON-RPC on stdio, or Streamable HTTP with a
 * session id) so that the tests see exactly what a client sees.
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { existsSync } from "node:fs";
import { DIST_BINARY } from "./binary_fixture.ts";
import { type Msg, nodeServerCommand, serverCommand } from "./harness.ts";

/** The protocol version the tests' client asks for (the Codex CLI 0.171's). */
export const CLIENT_PROTOCOL = "2025-06-18";

/** The runtimes the MCP server is tested on: Deno from source, the npm build, the binary. */
export function mcpRuntimes(): { name: string; command: () => string[]; ignore: boolean }[] {
  return [
    { name: "deno", command: serverCommand, ignore: false },
    { name: "node", command: nodeServerCommand, ignore: false },
    // CI builds the binary before the tests (.ci/run); elsewhere it may be missing.
    { name: "binary", command: () => [DIST_BINARY], ignore: !existsSync(DIST_BINARY) },
  ];
}

/** What every MCP test client does. */
export interface McpClient {
  /** Send a request; resolves to the whole response (result or error). */
  request(method: string, params?: Msg): Promise<Msg>;
  /** Send a notification. */
  notify(method: string, params?: Msg): Promise<void>;
  /** The id the next request will carry. */
  readonly nextId: number;
  /** Stop the client (and a stdio server with it). */
  close(): Promise<void>;
}

/** `initialize`, then `notifications/initialized`; returns the initialize result. */
export async function initialize(client: McpClient): Promise<Msg> {
  const r = await client.request("initialize", {
    protocolVersion: CLIENT_PROTOCOL,
    capabilities: {},
    clientInfo: { name: "exec-server-tests", version: "1" },
  });
  if (r.error) throw new Error(`initialize failed: ${JSON.stringify(r.error)}`);
  await client.notify("notifications/initialized");
  return r.result;
}

/** Call a tool; resolves to its result (throws on a protocol error). */
export async function callTool(client: McpClient, name: string, args: Msg = {}): Promise<Msg> {
  const r = await client.request("tools/call", { name, arguments: args });
  if (r.error) throw new Error(`${name}: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** The text of a tool result's content, joined. */
export function textOf(result: Msg): string {
  return (result.content ?? []).filter((c: Msg) => c.type === "text").map((c: Msg) => c.text)
    .join("\n");
}

/** `exec-server mcp FLAGS` on stdio. */
export class McpStdio implements McpClient {
  readonly child: ChildProcess;
  readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;
  #id = 1;
  #pending = new Map<number, (m: Msg) => void>();
  #buffer = "";

  constructor(flags: string[] = [], command: string[] = serverCommand()) {
    const [cmd, ...rest] = command;
    this.child = spawn(cmd, [...rest, "mcp", ...flags], {
      stdio: ["pipe", "pipe", "pipe"],
      env: process.env,
    });
    this.exited = new Promise((r) => this.child.once("exit", (code) => r(code)));
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (d: string) => this.stderr.push(d));
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (d: string) => {
      this.#buffer += d;
      for (let nl = this.#buffer.indexOf("\n"); nl >= 0; nl = this.#buffer.indexOf("\n")) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line.trim() === "") continue;
        const msg = JSON.parse(line);
        if (msg.id !== undefined && this.#pending.has(msg.id)) {
          this.#pending.get(msg.id)!(msg);
          this.#pending.delete(msg.id);
        }
      }
    });
  }

  get nextId(): number {
    return this.#id;
  }

  request(method: string, params?: Msg): Promise<Msg> {
    const id = this.#id++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, resolve);
      this.exited.then((code) =>
        reject(
          new Error(`server exited (${code}) before answering ${method}: ${this.stderr.join("")}`),
        )
      );
      this.#write({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    });
  }

  notify(method: string, params?: Msg): Promise<void> {
    this.#write({ jsonrpc: "2.0", method, ...(params ? { params } : {}) });
    return Promise.resolve();
  }

  /** Send a raw line (for malformed input). */
  writeLine(line: string): void {
    this.child.stdin!.write(line + "\n");
  }

  #write(msg: Msg): void {
    this.child.stdin!.write(JSON.stringify(msg) + "\n");
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** A client of a Streamable HTTP endpoint. */
export class McpHttp implements McpClient {
  readonly url: string;
  readonly token: string | undefined;
  sessionId: string | undefined;
  #id = 1;

  constructor(url: string, token?: string) {
    this.url = url;
    this.token = token;
  }

  get nextId(): number {
    return this.#id;
  }

  /** POST one message; the raw response. */
  post(msg: Msg, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    return fetch(this.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": CLIENT_PROTOCOL,
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}),
        ...headers,
      },
      body: JSON.stringify(msg),
      signal,
    });
  }

  async request(method: string, params?: Msg, signal?: AbortSignal): Promise<Msg> {
    const res = await this.post(
      { jsonrpc: "2.0", id: this.#id++, method, ...(params ? { params } : {}) },
      {},
      signal,
    );
    this.sessionId ??= res.headers.get("mcp-session-id") ?? undefined;
    const body = await res.text();
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${body}`);
    if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
      const data = body.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
      return JSON.parse(data[data.length - 1]);
    }
    return JSON.parse(body);
  }

  async notify(method: string, params?: Msg): Promise<void> {
    const res = await this.post({ jsonrpc: "2.0", method, ...(params ? { params } : {}) });
    await res.body?.cancel();
  }

  async close(): Promise<void> {
    if (!this.sessionId) return;
    const res = await fetch(this.url, {
      method: "DELETE",
      headers: {
        "mcp-session-id": this.sessionId,
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
      },
    });
    await res.body?.cancel();
  }
}

/** Start `exec-server mcp --listen http://127.0.0.1:0/mcp FLAGS`; its URL and token from stderr. */
export async function startMcpHttp(
  flags: string[] = [],
  command: string[] = serverCommand(),
): Promise<{ child: ChildProcess; url: string; token: string; stop(): Promise<void> }> {
  const [cmd, ...rest] = command;
  const child = spawn(cmd, [...rest, "mcp", "--listen", "http://127.0.0.1:0/mcp", ...flags], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise((r) => child.once("exit", r));
  let err = "";
  child.stderr!.setEncoding("utf8");
  const found = await new Promise<{ url: string; token: string }>((resolve, reject) => {
    child.stderr!.on("data", (d: string) => {
      err += d;
      const url = /listening on (\S+)/.exec(err)?.[1];
      const token = /auth token: (\S+)/.exec(err)?.[1] ?? "";
      if (url && (token || flags.includes("--token-file") || flags.includes("--no-auth"))) {
        resolve({ url, token });
      }
    });
    exited.then(() => reject(new Error(`mcp http server exited: ${err}`)));
  });
  return {
    child,
    ...found,
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
