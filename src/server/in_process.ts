/**
 * A server in this process, connected through memory: the same protocol
 * and semantics as a remote server, with no transport.
 *
 * @module
 */
import type { FrameConnection } from "../rpc/connection.ts";
import { type ConnectionPairOptions, createConnectionPair } from "../transport/in_process.ts";
import type { ServerOptions } from "./options.ts";
import { ExecServer } from "./server.ts";

/** A client's end of an in-process server, and the server's lifetime. */
export interface InProcessServer {
  /** The end to hand to a client. */
  connection: FrameConnection;
  /** The server serving the other end. */
  server: ExecServer;
  /** Resolves once the server's session has ended and its processes were killed. */
  served: Promise<void>;
}

/**
 * Start an {@linkcode ExecServer} on one end of a connection pair and
 * return the other end. When the client closes its end, the session ends,
 * its processes are killed, and the server closes its end.
 */
export function startInProcessServer(
  serverOptions: Partial<ServerOptions> = {},
  pairOptions: ConnectionPairOptions = {},
): InProcessServer {
  const [clientEnd, serverEnd] = createConnectionPair({
    highWaterBytes: pairOptions.highWaterBytes ?? serverOptions.outputHighWaterBytes,
    lowWaterBytes: pairOptions.lowWaterBytes,
  });
  const server = new ExecServer(serverOptions);
  const served = server.serve(serverEnd).finally(() => serverEnd.close());
  return { connection: clientEnd, server, served };
}
