/**
 * A minimal streamable-HTTP MCP server (protocol 2025-06-18) on loopback,
 * for the Codex CLI tests: JSON-RPC over `POST /mcp`, answered as
 * server-sent events when the client's `Accept` allows them (as upstream's
 * streamed `http/request` bodies carry them, unless made with `sse:
 * false`) and as JSON otherwise. It
 * offers one tool, `lookup {q}`, answering `answer-for-<q>`, and records
 * every exchange it saw.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** One HTTP exchange the fixture saw. */
export interface McpExchange {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The JSON-RPC message of a POST, parsed. */
  // deno-lint-ignore no-explicit-any
  body?: any;
  /** The status it was answered with. */
  status: number;
}

const SESSION = "mcp-session-0123";

/** The one tool this server offers. */
export const LOOKUP_TOOL = {
  name: "lookup",
  description: "Look a word up in the test dictionary.",
  inputSchema: {
    type: "object",
    properties: { q: { type: "string", description: "the word" } },
    required: ["q"],
  },
};

/** The MCP server. */
export class McpHttpServer {
  readonly exchanges: McpExchange[] = [];
  url = "";
  #server: http.Server;
  #sse: boolean;

  /** `sse`: answer as server-sent events when the client accepts them. */
  constructor({ sse = true }: { sse?: boolean } = {}) {
    this.#sse = sse;
    this.#server = http.createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (d: string) => body += d);
      req.on("end", () => this.#answer(req, body, res));
    });
  }

  /** Listen on loopback; {@linkcode url} is then `http://127.0.0.1:PORT/mcp`. */
  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/mcp`;
    return this;
  }

  /** The JSON-RPC methods received, in order. */
  methods(): string[] {
    return this.exchanges.filter((e) => e.body?.method).map((e) => e.body.method);
  }

  /** The `tools/call` requests received. */
  // deno-lint-ignore no-explicit-any
  toolCalls(): any[] {
    return this.exchanges.filter((e) => e.body?.method === "tools/call").map((e) => e.body);
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((r) => this.#server.close(() => r()));
  }

  #answer(req: http.IncomingMessage, text: string, res: http.ServerResponse): void {
    const seen: McpExchange = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      status: 0,
    };
    this.exchanges.push(seen);
    const reply = (status: number, headers: Record<string, string> = {}, body = "") => {
      seen.status = status;
      res.writeHead(status, headers);
      res.end(body);
    };
    if (req.method === "GET") return reply(405, { allow: "POST, DELETE" });
    if (req.method === "DELETE") return reply(200);
    if (req.method !== "POST") return reply(405);
    try {
      seen.body = JSON.parse(text);
    } catch {
      return reply(400, { "content-type": "text/plain" }, "not JSON");
    }
    const message = seen.body;
    // A notification or a response: accepted, no body.
    if (message.id === undefined || message.id === null || !message.method) return reply(202);
    const result = this.#result(message.method, message.params ?? {});
    const answer = JSON.stringify(
      result instanceof Error
        ? { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: result.message } }
        : { jsonrpc: "2.0", id: message.id, result },
    );
    const headers: Record<string, string> = { "mcp-session-id": SESSION };
    if (this.#sse && /text\/event-stream/.test(String(req.headers.accept ?? ""))) {
      headers["content-type"] = "text/event-stream";
      headers["cache-control"] = "no-cache";
      seen.status = 200;
      res.writeHead(200, headers);
      // Two writes, so that a streamed body arrives in more than one piece.
      res.write(`id: ${message.id}\nevent: message\n`);
      setTimeout(() => res.end(`data: ${answer}\n\n`), 5);
      return;
    }
    headers["content-type"] = "application/json";
    reply(200, headers, answer);
  }

  // deno-lint-ignore no-explicit-any
  #result(method: string, params: any): unknown {
    switch (method) {
      case "initialize":
        return {
          protocolVersion: typeof params.protocolVersion === "string"
            ? params.protocolVersion
            : "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "mcp-http-fixture", version: "1.0.0" },
        };
      case "ping":
        return {};
      case "tools/list":
        return { tools: [LOOKUP_TOOL] };
      case "tools/call":
        if (params.name !== LOOKUP_TOOL.name) return new Error(`no tool ${params.name}`);
        return {
          content: [{ type: "text", text: `answer-for-${params.arguments?.q}` }],
          isError: false,
        };
      default:
        return new Error(`method not found: ${method}`);
    }
  }
}
