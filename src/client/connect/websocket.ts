/**
 * Connecting to `exec-server --listen ws://...`: the opening handshake with
 * the bearer token, within a time limit, with typed failures.
 *
 * @module
 */
import { createClientWebSocket, waitForOpen } from "../../runtime/websocket_client.ts";
import { WebSocketConnection } from "../../transport/websocket.ts";
import { ConnectError, ConnectTimeoutError } from "../errors.ts";
import type { WebSocketClientOptions } from "../options.ts";
import { CLIENT_MAX_MESSAGE_BYTES, describe, type OpenedConnection } from "./opened.ts";

/**
 * Open a websocket to `url`.
 *
 * @throws {TypeError} when `url` is not a ws:// or wss:// URL
 * @throws {ConnectTimeoutError} when the socket does not open in `connectTimeoutMs`
 * @throws {ConnectError} when it fails to open (refused, 401, ...)
 */
export async function openWebSocket(
  url: string,
  opts: WebSocketClientOptions,
): Promise<OpenedConnection> {
  if (!/^wss?:\/\//i.test(url)) {
    throw new TypeError(
      `websocket URL must start with ws:// or wss://, got ${JSON.stringify(url)}`,
    );
  }
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers.Authorization = `Bearer ${opts.token}`;
  const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
  let socket;
  try {
    socket = await createClientWebSocket(url, {
      headers,
      maxPayloadBytes: opts.maxMessageBytes ?? CLIENT_MAX_MESSAGE_BYTES,
    });
  } catch (err) {
    throw new ConnectError(url, describe(err), { cause: err });
  }
  const connection = new WebSocketConnection(socket, {
    maxMessageBytes: opts.maxMessageBytes ?? CLIENT_MAX_MESSAGE_BYTES,
    closeTimeoutMs: opts.closeTimeoutMs,
  });
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new ConnectTimeoutError(url, connectTimeoutMs)),
    connectTimeoutMs,
  );
  try {
    await waitForOpen(socket, abort.signal);
  } catch (err) {
    if (err instanceof ConnectTimeoutError) throw err;
    throw new ConnectError(url, describe(err), { cause: err });
  } finally {
    clearTimeout(timer);
  }
  return {
    connection,
    lifetime: {
      target: url,
      dispose: () => {
        if (socket.readyState !== 3) socket.terminate();
        return Promise.resolve();
      },
    },
  };
}
