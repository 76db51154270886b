/**
 * The MCP façade: the exec-server tools (commands, sessions, files) for
 * any MCP client, over an {@linkcode Environment} — this machine, or a
 * remote host through `ExecServerClient` — served by the official MCP SDK
 * on stdio or Streamable HTTP. `exec-server mcp` is this module with flags.
 *
 * @example
 * ```ts
 * import { ExecMcp, serveMcpHttp } from "./mod.ts";
 * import { Environment, ExecServerClient } from "../client/mod.ts";
 * const client = await ExecServerClient.connectSsh("me@build-box");
 * const mcp = new ExecMcp(Environment.remote(client), { root: "/srv/app" });
 * const http = await serveMcpHttp(mcp, { port: 8765 });
 * console.error(`MCP on ${http.url}, token ${http.token}`);
 * ```
 *
 * @module
 */
export { ExecMcp, type ExecMcpOptions } from "./exec_mcp.ts";
export { type McpStdioHandle, serveMcpStdio } from "./sdk_server.ts";
export type { Args } from "./tool_args.ts";
export { type McpHttpHandle, type McpHttpOptions, serveMcpHttp } from "./http_endpoint.ts";
export { type ToolDescriptor, TOOLS, toolsFor } from "./tool_list.ts";
export type { ContentBlock, ToolResult } from "./tool_result.ts";
