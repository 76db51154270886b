/**
 * The `exec-server` program: parse flags, serve stdio (or a websocket),
 * shut down cleanly on SIGTERM/SIGINT.
 *
 * @module
 */
import { within } from "../util/deadline.ts";
import process from "node:process";
import {
  onSignal,
  runtimeDescription,
  stdinInput,
  stdoutWritable,
  stdoutWriteCompletes,
} from "../runtime/runtime.ts";
import { createLogger, type Logger } from "../server/logger.ts";
import { ExecServer } from "../server/server.ts";
import { defaultSessionDir } from "../server/session_dir.ts";
import type { WebSocketServerHandle } from "../transport/serve_websocket.ts";
import { StdioConnection } from "../transport/stdio.ts";
import { VERSION } from "../version.ts";
import { type CliOptions, HELP, parseCliArgs, UsageError } from "./args.ts";
import { prepareProcess } from "./prepare_process.ts";

/**
 * Run the program with `args` (without the program name).
 *
 * @returns the exit code
 */
export async function main(args: string[]): Promise<number> {
  if (args[0] === "mcp") {
    // Loaded only here: the MCP SDK would otherwise add to every server's start.
    const { mcpMain } = await import("./mcp_main.ts");
    return await mcpMain(args.slice(1));
  }
  let cli: CliOptions;
  try {
    cli = parseCliArgs(args);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`exec-server: ${err.message}\nRun exec-server --help for usage.`);
      return 2;
    }
    throw err;
  }
  if (cli.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (cli.version) {
    process.stdout.write(`exec-server ${VERSION} (${runtimeDescription()})\n`);
    return 0;
  }
  const logger = createLogger(cli.logLevel);
  prepareProcess(logger);
  const server = await serverFor(cli, logger);
  let listener: WebSocketServerHandle | undefined;
  /** Waits (bounded) until the client has been sent everything queued. */
  let flushOutput = (): Promise<void> => Promise.resolve();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: stopping processes (grace ${cli.shutdownGraceMs} ms)`);
    // Refuse new websockets now; the open ones see their processes' exits
    // before they are closed.
    listener?.stopAccepting();
    server.shutdown(cli.shutdownGraceMs)
      // Output and exits reported during shutdown must reach the client
      // before exit() discards them, but a client that stopped reading may
      // hold the server only one more grace period.
      .then(() => flushOutput())
      .then(() => listener?.close())
      .finally(() => process.exit(0));
  };
  onSignal("SIGTERM", () => stop("SIGTERM"));
  onSignal("SIGINT", () => stop("SIGINT"));
  // A hang-up (a terminal's ssh gone) ends the server, unless it keeps
  // sessions for their clients to resume: that is what they are kept for.
  onSignal("SIGHUP", () => {
    if (server.sessionCount === 0) stop("SIGHUP");
    else logger.info(`SIGHUP: keeping ${server.sessionCount} session(s)`);
  });

  if (cli.listen.kind === "ws") {
    // Loaded only here: the websocket stack (ws, http, crypto) would
    // otherwise add to every stdio server's start, which ssh clients wait for.
    const { startWebSocketCli } = await import("./websocket_main.ts");
    const started = await startWebSocketCli(server, cli, logger);
    if (typeof started === "number") return started;
    listener = started;
    // Serve until SIGTERM/SIGINT; stop() ends the process.
    return await new Promise<number>(() => {});
  }
  const conn = new StdioConnection(stdinInput(), stdoutWritable(), {
    maxMessageBytes: server.options.maxMessageBytes,
    highWaterBytes: server.options.outputHighWaterBytes,
    reuseWriteBuffer: stdoutWriteCompletes,
  });
  flushOutput = () => flushWithin(conn, cli.shutdownGraceMs);
  await serveStdio(server, conn, logger);
  return 0;
}

/** The server the flags ask for. */
async function serverFor(cli: CliOptions, logger: Logger): Promise<ExecServer> {
  return new ExecServer({
    maxOutputBytes: cli.maxOutputBytes,
    exitedRetentionMs: cli.exitedRetentionMs,
    maxProcesses: cli.maxProcesses,
    maxExitedProcesses: cli.maxExitedProcesses,
    maxExitedOutputBytes: cli.maxExitedOutputBytes,
    sessionGraceMs: cli.sessionGraceMs,
    maxTtlMs: cli.maxTtlMs,
    sessionDir: cli.sessionDir === null ? undefined : cli.sessionDir ?? await defaultSessionDir(),
    maxMessageBytes: cli.maxMessageBytes,
    maxReadFileBytes: cli.maxReadFileBytes,
    exitDrainMs: cli.exitDrainMs,
    outputHighWaterBytes: cli.outputHighWaterBytes,
    logger,
  });
}

/** Serve the one stdio connection, then whatever sessions it left, then end. */
async function serveStdio(server: ExecServer, conn: StdioConnection, logger: Logger) {
  logger.info(`exec-server ${VERSION} serving stdio (${runtimeDescription()})`);
  await server.serve(conn);
  if (server.sessionCount > 0 && await server.sessionsReachable()) {
    // The client went away (an ssh dropped) but its sessions live on: a
    // later server of this user resumes them through their sockets. This
    // one exits once the last of them has ended.
    logger.info(`stdin closed; keeping ${server.sessionCount} session(s) for their clients`);
    await server.whenIdle();
  }
  // Without a usable session directory nobody can resume a stdio session: end it
  // now rather than leave its temporary files (abandoned replace handles).
  await server.endSessions();
  await conn.close();
}

/** Wait until `conn` has written everything, or `ms` have passed. */
async function flushWithin(conn: StdioConnection, ms: number): Promise<void> {
  await within(conn.flushed(), ms);
}
