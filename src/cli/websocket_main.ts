/**
 * The `--listen ws://` part of the program: load the token, bind, and tell
 * the operator (on stderr) where the server listens and how to get in.
 *
 * @module
 */
import { ListenError } from "../runtime/websocket_server.ts";
import type { Logger } from "../server/logger.ts";
import type { ExecServer } from "../server/server.ts";
import {
  serveWebSocket,
  WEBSOCKET_MAX_OUTPUT_BYTES,
  WEBSOCKET_MAX_READ_FILE_BYTES,
  type WebSocketServerHandle,
} from "../transport/serve_websocket.ts";
import {
  isLoopbackHost,
  readTokenFile,
  WebSocketConfigError,
} from "../transport/websocket_auth.ts";
import type { CliOptions } from "./args.ts";

/** The stderr line announcing the bound URL; clients and scripts parse it. */
export const LISTENING_PREFIX = "exec-server: listening on ";

/** The stderr line carrying a generated token (printed before the URL line). */
export const TOKEN_PREFIX = "exec-server: auth token: ";

/**
 * Start the websocket listener described by `cli`.
 *
 * @returns the running listener, or an exit code when it cannot start
 */
export async function startWebSocketCli(
  server: ExecServer,
  cli: CliOptions,
  logger: Logger,
): Promise<WebSocketServerHandle | number> {
  if (cli.listen.kind !== "ws") throw new TypeError("startWebSocketCli needs a ws:// address");
  const { hostname, port } = cli.listen;
  let handle: WebSocketServerHandle;
  try {
    if (cli.noAuth && cli.tokenFile !== undefined) {
      throw new WebSocketConfigError("--no-auth and --token-file exclude each other");
    }
    let token: string | undefined;
    if (cli.tokenFile !== undefined) {
      const file = await readTokenFile(cli.tokenFile);
      if (file.readableByOthers) {
        logger.warn(`token file ${cli.tokenFile} is readable by other users (chmod 600 it)`);
      }
      token = file.token;
    }
    handle = await serveWebSocket(server, {
      hostname,
      port,
      token,
      noAuth: cli.noAuth,
      allowOrigins: cli.allowOrigins,
      maxConnections: cli.maxConnections,
      logger,
    });
  } catch (err) {
    if (err instanceof WebSocketConfigError || err instanceof ListenError) {
      console.error(`exec-server: ${err.message}`);
      return err instanceof WebSocketConfigError ? 2 : 1;
    }
    throw err;
  }
  if (cli.noAuth) {
    console.error(
      `exec-server: WARNING: --no-auth: anyone who can connect to ${handle.url} ` +
        `can run any command and read or write any file as this user`,
    );
  } else if (!isLoopbackHost(hostname)) {
    console.error(
      `exec-server: WARNING: ws:// is not encrypted: the token and all traffic cross the ` +
        `network in clear text; prefer a loopback address behind an SSH tunnel or a TLS proxy`,
    );
  }
  // The caps are announced per session, but an operator who asked for more
  // should not have to find that out from a client's error.
  const capped: [string, number | undefined, number][] = [
    ["--max-read-file-bytes", cli.maxReadFileBytes, WEBSOCKET_MAX_READ_FILE_BYTES],
    ["--max-output-bytes", cli.maxOutputBytes, WEBSOCKET_MAX_OUTPUT_BYTES],
  ];
  for (const [flag, given, cap] of capped) {
    if (given !== undefined && given > cap) {
      logger.warn(
        `${flag} ${given} is lowered to ${cap} for websocket sessions, ` +
          `so that every response fits in a 64 MiB websocket message`,
      );
    }
  }
  if (handle.tokenGenerated) console.error(`${TOKEN_PREFIX}${handle.token}`);
  console.error(`${LISTENING_PREFIX}${handle.url}`);
  return handle;
}
