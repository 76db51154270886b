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
export type {
  FrameConnection,
  FramePart,
  IncomingFrame,
  OutgoingFrame,
} from "./src/rpc/connection.ts";
export { Base64Part, BinaryFrame, frameText } from "./src/rpc/connection.ts";
export { PeerClosedError, RemoteError, RpcPeer } from "./src/rpc/peer.ts";
export { SERVER_NAME, VERSION } from "./src/version.ts";
export * from "./src/client/mod.ts";
export * from "./src/fs/mod.ts";
export { type ConnectionPairOptions, createConnectionPair } from "./src/transport/in_process.ts";
export { type InProcessServer, startInProcessServer } from "./src/server/in_process.ts";
export { connectInProcess } from "./src/client/connect/in_process.ts";
export {
  type ConnectionServer,
  formatWsUrl,
  READY_PATH,
  serveWebSocket,
  type ServeWebSocketOptions,
  WEBSOCKET_PATH,
  type WebSocketLogger,
  type WebSocketServerHandle,
} from "./src/transport/serve_websocket.ts";
export {
  WebSocketConnection,
  type WebSocketConnectionOptions,
  type WebSocketLike,
} from "./src/transport/websocket.ts";
export {
  BearerToken,
  generateToken,
  isLoopbackHost,
  readTokenFile,
  type TokenFile,
  WebSocketConfigError,
} from "./src/transport/websocket_auth.ts";
export { ListenError } from "./src/runtime/websocket_server.ts";
// Were exported by the protocol module until 0.2; they read runtime errors.
export { declaredErrnoOf as errnoOf, toRpcError } from "./src/runtime/errno.ts";
