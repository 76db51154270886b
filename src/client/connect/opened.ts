/**
 * What every way of connecting produces before the handshake: a frame
 * connection and how the client's lifetime is tied to what carries it.
 *
 * @module
 */
import type { FrameConnection } from "../../rpc/connection.ts";
import type { ConnectionLifetime } from "./child_server.ts";

/** A transport that is open and ready for `initialize`. */
export interface OpenedConnection {
  /** The frames to speak JSON-RPC over. */
  connection: FrameConnection;
  /** Ends what carries the connection along with the client. */
  lifetime: ConnectionLifetime;
  /**
   * Turns a failed handshake into the error to throw (e.g. one that says
   * the bootstrap's remote side failed); the error as it is by default.
   */
  handshakeFailure?(err: unknown): unknown;
}

/**
 * What the client accepts by default: more than the server's own 128 MiB
 * limit, since a 128 MiB file comes back as ~171 MB of base64.
 */
export const CLIENT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/** An error's message, or the value as text. */
export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
