/**
 * exec-server: a process-and-filesystem server speaking the exec-server.v0
 * JSON-RPC protocol over stdio or a websocket, and the pieces to embed it.
 *
 * @example
 * ```ts
 * import { ExecServer, StdioConnection } from "./mod.ts";
 * const server = new ExecServer();
 * await server.serve(new StdioConnection(Deno.stdin.readable, Deno.stdout.writable));
 * ```
 *
 * @module
 */
export * from "./src/protocol/mod.ts";
export * from "./src/server/mod.ts";
export { StdioConnection, type StdioConnectionOptions } from "./src/transport/stdio.ts";
export type { FrameConnection, IncomingFrame } from "./src/rpc/connection.ts";
export { PeerClosedError, RemoteError, RpcPeer } from "./src/rpc/peer.ts";
export { SERVER_NAME, VERSION } from "./src/version.ts";
