/**
 * The official MCP SDK's side of the façade: a low-level SDK `Server` per
 * MCP connection, answering `tools/list` and `tools/call` from an
 * {@linkcode ExecMcp} (hand-written JSON schemas, no SDK schema layer),
 * and stdio serving. Only this module and the HTTP endpoint touch the SDK.
 *
 * @module
 */
import process from "node:process";
import { Server, type Tool } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { ExecMcp } from "./exec_mcp.ts";
import type { Args } from "./tool_args.ts";

/**
 * A new SDK server for one MCP connection (stdio, or one HTTP session);
 * when the connection closes, the commands started through it are killed.
 */
export function connectionServer(mcp: ExecMcp): Server {
  const server = new Server(
    { name: "exec-server", version: mcp.version },
    { capabilities: { tools: {} }, instructions: mcp.instructions },
  );
  const owner = {};
  // The descriptors are plain JSON; the SDK's type spells JSON out in full.
  server.setRequestHandler("tools/list", () => ({ tools: [...mcp.tools] as Tool[] }));
  server.setRequestHandler(
    "tools/call",
    (request, ctx) =>
      mcp.call(request.params.name, (request.params.arguments ?? {}) as Args, {
        signal: callSignal(ctx.mcpReq.signal, ctx.http?.req?.signal),
        owner,
      }),
  );
  server.onclose = () => {
    mcp.releaseOwner(owner).catch(() => {});
  };
  return server;
}

/**
 * Aborted by a cancellation, or when an HTTP client hangs up on the call:
 * its answer would reach nobody, so it must take no output (a
 * cancellation POST can even arrive before the call it names).
 */
function callSignal(cancelled: AbortSignal, hungUp: AbortSignal | undefined): AbortSignal {
  return hungUp ? AbortSignal.any([cancelled, hungUp]) : cancelled;
}

/** A stdio connection being served. */
export interface McpStdioHandle {
  /** Resolves when the client has closed stdin (the end of the session). */
  readonly ended: Promise<void>;
  /** Stop serving. */
  close(): Promise<void>;
}

/**
 * Serve `mcp` on this process's stdin and stdout (MCP's stdio binding:
 * newline-delimited JSON-RPC; the client closing stdin ends it).
 *
 * @example
 * ```ts
 * import { Environment } from "../client/environment.ts";
 * import { ExecMcp } from "./exec_mcp.ts";
 * import { serveMcpStdio } from "./sdk_server.ts";
 * const stdio = serveMcpStdio(new ExecMcp(Environment.local()));
 * await stdio.ended;
 * ```
 */
export function serveMcpStdio(
  mcp: ExecMcp,
  options: { onProblem?: (message: string) => void } = {},
): McpStdioHandle {
  const handle = serveStdio(() => connectionServer(mcp), {
    onerror: (err) => options.onProblem?.(`stdio: ${err.message}`),
  });
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  return { ended, close: () => handle.close() };
}
