/**
 * Serve sessions over websockets: bind a listener, admit requests by token,
 * origin and connection count, and hand each websocket to the server as its
 * own connection.
 *
 * @module
 */
import type { FrameConnection } from "../rpc/connection.ts";
import {
  type HttpRequestHead,
  listenWebSocket,
  type RequestVerdict,
  type WebSocketListener,
} from "../runtime/websocket_server.ts";
import { WebSocketConnection, type WebSocketLike } from "./websocket.ts";
import {
  BearerToken,
  generateToken,
  isLoopbackHost,
  OriginPolicy,
  validateToken,
  WebSocketConfigError,
} from "./websocket_auth.ts";

/** The path that answers `200 ok` without a token, for health checks. */
export const READY_PATH = "/readyz";

/** The path websocket clients connect to. */
export const WEBSOCKET_PATH = "/";

/**
 * The largest file `fs/readFile` returns in a websocket session, whatever
 * the server allows on stdio: 50,328,576 bytes (48 MiB less 3 KiB). The
 * base64 response must fit in one 64 MiB message, the fixed receive limit
 * of Deno's `WebSocket` (and the default of other common clients), which
 * otherwise drops the connection and every process on it; this is 3/4 of
 * 64 MiB less 4 KiB left for the JSON around the data.
 */
export const WEBSOCKET_MAX_READ_FILE_BYTES: number = Math.floor(
  (64 * 1024 * 1024 - 4096) * 3 / 4,
);

/**
 * The most output a websocket session retains per process (32 MiB), when
 * the server would retain more. A `process/read` without `maxBytes`
 * returns all of it as base64 plus some JSON per chunk, which must fit in
 * a 64 MiB message too; 32 MiB leaves room for chunks averaging down to
 * about 75 bytes.
 */
export const WEBSOCKET_MAX_OUTPUT_BYTES: number = 32 * 1024 * 1024;

/** Anything that serves connections, such as `ExecServer`. */
export interface ConnectionServer {
  /**
   * Serve one connection until it ends, with `overrides` of the server's
   * limits for this connection only.
   */
  serve(
    conn: FrameConnection,
    overrides?: { maxReadFileBytes?: number; maxOutputBytes?: number },
  ): Promise<void>;
  /** Limits used as defaults for the websocket connections. */
  readonly options?: {
    readonly maxMessageBytes?: number;
    readonly outputHighWaterBytes?: number;
    readonly maxReadFileBytes?: number;
    readonly maxOutputBytes?: number;
  };
}

/** Where the listener reports refusals and connections. */
export interface WebSocketLogger {
  /** Refused credentials or origins. */
  warn(message: string): void;
  /** Connections and other refusals. */
  info(message: string): void;
}

/** Options of {@linkcode serveWebSocket}. */
export interface ServeWebSocketOptions {
  /** Address or name to bind (default `127.0.0.1`). */
  hostname?: string;
  /** Port (default 0: a free one). */
  port?: number;
  /**
   * The bearer token clients must send as `Authorization: Bearer <token>`.
   * Without it (and without `noAuth`) a random token is generated, which is
   * allowed on loopback addresses only.
   */
  token?: string;
  /** Accept every client without a token. Only for trusted setups. */
  noAuth?: boolean;
  /** Browser origins allowed to connect; requests with any other `Origin` get 403. */
  allowOrigins?: readonly string[];
  /** Concurrent websocket connections; more get 503 (default 64). */
  maxConnections?: number;
  /** The largest accepted frame (default: the server's `maxMessageBytes`, else 128 MiB). */
  maxMessageBytes?: number;
  /** Buffered outgoing bytes at which a connection's processes pause (default: the server's `outputHighWaterBytes`, else 8 MiB). */
  highWaterBytes?: number;
  /** Ping interval in ms; a peer that misses a pong is disconnected (default 30000, 0 disables). */
  heartbeatMs?: number;
  /** Where refusals and connections are logged (default: nowhere). */
  logger?: WebSocketLogger;
}

/** A running websocket listener. */
export interface WebSocketServerHandle {
  /** The bound URL, e.g. `ws://127.0.0.1:43125` (an IP address even when a name was bound). */
  readonly url: string;
  /** The bound address. */
  readonly hostname: string;
  /** The bound port. */
  readonly port: number;
  /** The token clients must send, or undefined with `noAuth`. */
  readonly token: string | undefined;
  /** True when the token was generated (so the caller should show it). */
  readonly tokenGenerated: boolean;
  /** Open websocket connections. */
  readonly connectionCount: number;
  /**
   * Refuse new connections (503) while the open ones and their processes
   * carry on; `/readyz` answers 503 from now on. The port stays bound until
   * `close()`.
   */
  stopAccepting(): void;
  /** Release the port and close every connection, which kills their processes. */
  close(): Promise<void>;
}

const DEFAULT_MAX_MESSAGE_BYTES = 128 * 1024 * 1024;
const HARD_FRAME_CAP_BYTES = 64 * 1024 * 1024;

/**
 * Listen for websocket clients and serve each as its own session of
 * `server`.
 *
 * Requests are judged in this order: `GET /readyz` → 200 `ok`; anything
 * but a websocket upgrade of `/` → 404; an `Origin` not allowed → 403; a
 * missing or wrong token → 401; too many connections → 503.
 *
 * Sessions get the server's limits, except that `fs/readFile` is capped at
 * {@linkcode WEBSOCKET_MAX_READ_FILE_BYTES} and retained output at
 * {@linkcode WEBSOCKET_MAX_OUTPUT_BYTES}, so that no response outgrows a
 * 64 MiB websocket message; a lower server limit wins.
 *
 * @example
 * ```ts
 * import { ExecServer, serveWebSocket } from "../../mod.ts";
 * const server = new ExecServer();
 * const ws = await serveWebSocket(server, { port: 0, token: "s3cret-token" });
 * console.error(`listening on ${ws.url}`);
 * // ... later
 * await ws.close();
 * ```
 * @throws {WebSocketConfigError} for unsafe or contradictory options
 * @throws {ListenError} when the address cannot be bound
 */
export async function serveWebSocket(
  server: ConnectionServer,
  options: ServeWebSocketOptions = {},
): Promise<WebSocketServerHandle> {
  const settings = serveSettings(server, options);
  const sessions = new SessionTable(server, settings);
  const listener: WebSocketListener = await listenWebSocket({
    hostname: settings.hostname,
    port: settings.port,
    // Oversized frames are answered with an error and the connection lives
    // on, up to this hard cap (Deno's own is 64 MiB); beyond it receiving
    // the frame is not worth the memory and the socket is closed.
    maxPayloadBytes: Math.max(2 * settings.maxMessageBytes, HARD_FRAME_CAP_BYTES),
    heartbeatMs: options.heartbeatMs ?? 30_000,
    onRequest: (head) => sessions.judge(head),
    onError: (message) => settings.logger?.warn(message),
  });
  return {
    url: formatWsUrl(listener.hostname, listener.port),
    hostname: listener.hostname,
    port: listener.port,
    token: settings.token,
    tokenGenerated: settings.tokenGenerated,
    get connectionCount() {
      return sessions.open.size;
    },
    stopAccepting() {
      sessions.accepting = false;
    },
    async close() {
      sessions.accepting = false;
      const entries = [...sessions.open];
      await Promise.all([listener.close(), ...entries.map((e) => e.conn.close())]);
      await Promise.all(entries.map((e) => e.done));
    },
  };
}

/** {@linkcode ServeWebSocketOptions} checked, with the defaults filled in. */
interface ServeSettings {
  hostname: string;
  port: number;
  maxConnections: number;
  token: string | undefined;
  tokenGenerated: boolean;
  bearer: BearerToken | undefined;
  origins: OriginPolicy;
  maxMessageBytes: number;
  highWaterBytes: number | undefined;
  sessionLimits: { maxReadFileBytes: number; maxOutputBytes?: number };
  logger: WebSocketLogger | undefined;
}

/** Check `options` and fill in the defaults, some of them from `server`. */
function serveSettings(server: ConnectionServer, options: ServeWebSocketOptions): ServeSettings {
  const hostname = options.hostname ?? "127.0.0.1";
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new WebSocketConfigError(`port must be 0..65535, got ${port}`);
  }
  const maxConnections = options.maxConnections ?? 64;
  if (!Number.isInteger(maxConnections) || maxConnections < 1) {
    throw new WebSocketConfigError(`maxConnections must be at least 1, got ${maxConnections}`);
  }
  const { token, tokenGenerated } = serveToken(hostname, options);
  return {
    hostname,
    port,
    maxConnections,
    token,
    tokenGenerated,
    bearer: token === undefined ? undefined : new BearerToken(token),
    origins: new OriginPolicy(options.allowOrigins ?? []),
    maxMessageBytes: options.maxMessageBytes ?? server.options?.maxMessageBytes ??
      DEFAULT_MAX_MESSAGE_BYTES,
    highWaterBytes: options.highWaterBytes ?? server.options?.outputHighWaterBytes,
    sessionLimits: websocketSessionLimits(server.options),
    logger: options.logger,
  };
}

/** The token clients must send: the given one, none with `noAuth`, else a generated one. */
function serveToken(
  hostname: string,
  options: ServeWebSocketOptions,
): { token: string | undefined; tokenGenerated: boolean } {
  const noAuth = options.noAuth ?? false;
  if (noAuth && options.token !== undefined) {
    throw new WebSocketConfigError("a token and no-auth exclude each other: choose one");
  }
  const token = options.token === undefined ? undefined : validateToken(options.token);
  if (noAuth || token !== undefined) return { token, tokenGenerated: false };
  // A generated token exists only in this process's stderr; on an address
  // others can reach, insist on a secret the operator provisioned.
  if (!isLoopbackHost(hostname)) {
    throw new WebSocketConfigError(
      `refusing to listen on ${hostname}, which is not a loopback address, with a generated token: ` +
        `give a token file (--token-file), or --no-auth on a trusted network`,
    );
  }
  return { token: generateToken(), tokenGenerated: true };
}

/** A websocket being served, and the end of its session. */
interface OpenSession {
  conn: WebSocketConnection;
  done: Promise<void>;
}

function respond(status: number, body: string, headers?: Record<string, string>): RequestVerdict {
  return { kind: "respond", status, body, headers };
}

/**
 * Admission and connection accounting: judges each request, counts a slot
 * from the upgrade's start to its session's end, and tracks the sessions.
 */
class SessionTable {
  /** The sessions being served. */
  readonly open: Set<OpenSession> = new Set();
  /** False once the listener stops taking connections. */
  accepting = true;
  #slots = 0;
  #server: ConnectionServer;
  #settings: ServeSettings;

  constructor(server: ConnectionServer, settings: ServeSettings) {
    this.#server = server;
    this.#settings = settings;
  }

  /** Answer a request, or let it upgrade and start a session. */
  judge(head: HttpRequestHead): RequestVerdict {
    if (head.method === "GET" && head.path === READY_PATH && !head.wantsWebSocket) {
      return this.accepting ? respond(200, "ok") : respond(503, "stopping");
    }
    if (!head.wantsWebSocket || head.method !== "GET" || head.path !== WEBSOCKET_PATH) {
      return respond(404, "not found\n");
    }
    return this.#refuseOrigin(head) ?? this.#refuseToken(head) ?? this.#refuseCapacity(head) ??
      this.#admit(head.remoteAddress);
  }

  #refuseOrigin(head: HttpRequestHead): RequestVerdict | undefined {
    if (this.#settings.origins.allows(head.header("origin"))) return undefined;
    this.#settings.logger?.warn(
      `refused websocket from ${head.remoteAddress}: origin ${
        JSON.stringify(head.header("origin"))
      } is not allowed (--allow-origin)`,
    );
    return respond(403, "forbidden\n");
  }

  #refuseToken(head: HttpRequestHead): RequestVerdict | undefined {
    const bearer = this.#settings.bearer;
    if (!bearer || bearer.matches(head.header("authorization"))) return undefined;
    this.#settings.logger?.warn(
      `refused websocket from ${head.remoteAddress}: missing or wrong bearer token`,
    );
    return respond(401, "unauthorized\n", { "www-authenticate": 'Bearer realm="exec-server"' });
  }

  #refuseCapacity(head: HttpRequestHead): RequestVerdict | undefined {
    if (!this.accepting) return respond(503, "shutting down\n");
    const max = this.#settings.maxConnections;
    if (this.#slots < max) return undefined;
    this.#settings.logger?.info(
      `refused websocket from ${head.remoteAddress}: ${max} connections already open`,
    );
    return respond(503, "too many connections\n", { "retry-after": "1" });
  }

  #admit(from: string): RequestVerdict {
    // The slot is taken before the handshake ends so racing upgrades cannot
    // overshoot the limit.
    this.#slots++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#slots--;
    };
    return {
      kind: "upgrade",
      onAbort: release,
      onOpen: (socket) => this.#startSession(socket, from, release),
    };
  }

  #startSession(socket: WebSocketLike, from: string, release: () => void): void {
    if (!this.accepting) {
      socket.close(1001, "server stopping");
      release();
      return;
    }
    const { logger, maxMessageBytes, highWaterBytes, sessionLimits } = this.#settings;
    logger?.info(`websocket connection from ${from}`);
    const conn = new WebSocketConnection(socket, {
      maxMessageBytes,
      highWaterBytes,
      adoptMessages: true,
    });
    const entry: OpenSession = { conn, done: Promise.resolve() };
    entry.done = this.#server.serve(conn, sessionLimits)
      .catch((err) => logger?.warn(`websocket session from ${from} failed: ${err}`))
      .then(() => conn.close())
      .finally(() => {
        this.open.delete(entry);
        release();
      });
    this.open.add(entry);
  }
}

/**
 * The server's limits lowered to what a 64 MiB websocket message can carry.
 * A server that does not say its read limit gets the cap (the default
 * limit is above it); its output limit is lowered only when known to be
 * above the cap.
 */
function websocketSessionLimits(
  options: ConnectionServer["options"],
): { maxReadFileBytes: number; maxOutputBytes?: number } {
  const limits: { maxReadFileBytes: number; maxOutputBytes?: number } = {
    maxReadFileBytes: Math.min(
      options?.maxReadFileBytes ?? WEBSOCKET_MAX_READ_FILE_BYTES,
      WEBSOCKET_MAX_READ_FILE_BYTES,
    ),
  };
  const output = options?.maxOutputBytes;
  if (output !== undefined && output > WEBSOCKET_MAX_OUTPUT_BYTES) {
    limits.maxOutputBytes = WEBSOCKET_MAX_OUTPUT_BYTES;
  }
  return limits;
}

/**
 * `ws://HOST:PORT` with IPv6 addresses bracketed.
 *
 * @example
 * ```ts
 * import { formatWsUrl } from "./serve_websocket.ts";
 * formatWsUrl("::1", 8080); // "ws://[::1]:8080"
 * ```
 */
export function formatWsUrl(hostname: string, port: number): string {
  const host = hostname.includes(":") ? `[${hostname.replace("%", "%25")}]` : hostname;
  return `ws://${host}:${port}`;
}
