/**
 * The websocket surface shared by the runtime adapters (which create
 * sockets under Deno or Node) and the websocket transport (which frames
 * messages over them). It lives here, below both, so that the runtime
 * layer never imports the transport layer.
 *
 * @module
 */

/** The part of the standard `WebSocket` interface this transport uses. */
export interface WebSocketLike {
  /** 0 connecting, 1 open, 2 closing, 3 closed. */
  readonly readyState: number;
  /** Bytes handed to `send` but not yet written to the network. */
  readonly bufferedAmount: number;
  /** Set to `"arraybuffer"` by the connection. */
  binaryType: string;
  /** Queue one text frame, or a binary one for bytes. */
  send(data: string | Uint8Array): void;
  /** Start the closing handshake. */
  close(code?: number, reason?: string): void;
  /** Listen for `open`, `message`, `close` and `error`. */
  addEventListener(type: string, listener: (event: { data?: unknown }) => void): void;
}

/**
 * Whether `socket.send(bytes)` has copied the bytes when it returns, so
 * that the caller may reuse its buffer for the next message. Deno's own
 * `WebSocket` does (a buffer overwritten right after `send` arrives as it
 * was sent, checked with 8 MiB messages); the `ws` package may hold the
 * caller's buffer until it is written.
 */
export function sendCopiesBytes(socket: WebSocketLike): boolean {
  const g = globalThis as { Deno?: unknown; WebSocket?: unknown };
  return g.Deno !== undefined && typeof g.WebSocket === "function" &&
    socket instanceof (g.WebSocket as new (url: string) => object);
}
