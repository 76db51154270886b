/**
 * Opening a client websocket with request headers (for `Authorization`),
 * which the standard constructor cannot do: Deno's `WebSocket` takes a
 * `headers` option; under Node the `ws` package is loaded on first use.
 *
 * @module
 */
import { isDeno } from "./runtime.ts";
import { lendToWs } from "./ws_bufferutil.ts";
import type { WebSocketLike } from "./websocket_types.ts";

/**
 * The standard `WebSocket` surface both runtimes' client sockets share
 * (the websocket transport's `WebSocketLike`), plus a hard stop.
 */
export interface ClientWebSocket extends WebSocketLike {
  /** Drop the connection at once, without the closing handshake. */
  terminate(): void;
}

/** Options of {@linkcode createClientWebSocket}. */
export interface ClientWebSocketOptions {
  /** Extra request headers of the opening handshake. */
  headers?: Record<string, string>;
  /** The largest accepted incoming frame, in bytes (enforced by `ws` under Node). */
  maxPayloadBytes?: number;
}

interface DenoWebSocketConstructor {
  new (url: string, options: { headers?: Record<string, string> }): WebSocket;
}

/**
 * Create a websocket to `url` that is still connecting. Await
 * {@linkcode waitForOpen} before relying on it.
 *
 * @example
 * ```ts
 * import { createClientWebSocket, waitForOpen } from "./websocket_client.ts";
 * const socket = await createClientWebSocket("ws://127.0.0.1:8080", {
 *   headers: { Authorization: "Bearer secret" },
 * });
 * await waitForOpen(socket, AbortSignal.timeout(5000));
 * ```
 */
export async function createClientWebSocket(
  url: string,
  opts: ClientWebSocketOptions = {},
): Promise<ClientWebSocket> {
  const headers = opts.headers ?? {};
  if (isDeno) {
    const Ctor = globalThis.WebSocket as unknown as DenoWebSocketConstructor;
    const socket = new Ctor(url, { headers });
    return Object.assign(socket, {
      // Deno has no abortive close; a close without waiting is the closest.
      terminate: () => socket.close(),
    }) as unknown as ClientWebSocket;
  }
  // Masks every frame it sends: a word at a time, not ws's byte at a time.
  lendToWs();
  const { WebSocket: NodeWebSocket } = await import("ws");
  const socket = new NodeWebSocket(url, {
    headers,
    maxPayload: opts.maxPayloadBytes,
    perMessageDeflate: false,
  });
  return socket as unknown as ClientWebSocket;
}

/** The opening handshake failed; `detail` says how (e.g. a 401 answer). */
export class WebSocketOpenError extends Error {
  /** @param detail what the runtime reported */
  constructor(detail: string) {
    super(detail);
    this.name = "WebSocketOpenError";
  }
}

/**
 * Resolve once `socket` is open. Rejects with {@linkcode WebSocketOpenError}
 * when it fails or closes first, or with `signal.reason` when `signal`
 * aborts first (the socket is then terminated).
 */
export function waitForOpen(socket: ClientWebSocket, signal?: AbortSignal): Promise<void> {
  if (socket.readyState === 1) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let detail = "";
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      if (err === undefined) resolve();
      else reject(err);
    };
    const onAbort = () => {
      try {
        socket.terminate();
      } catch {
        // Already gone.
      }
      settle(signal!.reason);
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.addEventListener("open", () => settle());
    socket.addEventListener("error", (ev) => {
      detail = describeErrorEvent(ev);
      // Node's `ws` reports no close after some failures; Deno always closes.
      if (!isDeno) settle(new WebSocketOpenError(detail));
    });
    socket.addEventListener("close", (ev) => {
      const code = (ev as { code?: number }).code;
      settle(
        new WebSocketOpenError(
          detail || `the socket closed during the opening handshake (code ${code ?? "?"})`,
        ),
      );
    });
  });
}

function describeErrorEvent(ev: unknown): string {
  const e = ev as { message?: unknown; error?: unknown };
  if (typeof e.message === "string" && e.message) return e.message;
  if (e.error instanceof Error) return e.error.message;
  return "websocket error";
}
