/**
 * The `exec-server` program: parse flags, serve stdio (or a websocket),
 * shut down cleanly on SIGTERM/SIGINT.
 *
 * @module
 */
import process from "node:process";
import { onSignal, runtimeDescription, stdinReadable, stdoutWritable } from "../runtime/runtime.ts";
import { createLogger } from "../server/logger.ts";
import { ExecServer } from "../server/server.ts";
import { StdioConnection } from "../transport/stdio.ts";
import { VERSION } from "../version.ts";
import { type CliOptions, HELP, parseCliArgs, UsageError } from "./args.ts";

/**
 * Run the program with `args` (without the program name).
 *
 * @returns the exit code
 */
export async function main(args: string[]): Promise<number> {
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
  const server = new ExecServer({
    maxOutputBytes: cli.maxOutputBytes,
    exitedRetentionMs: cli.exitedRetentionMs,
    maxProcesses: cli.maxProcesses,
    maxMessageBytes: cli.maxMessageBytes,
    maxReadFileBytes: cli.maxReadFileBytes,
    exitDrainMs: cli.exitDrainMs,
    outputHighWaterBytes: cli.outputHighWaterBytes,
    logger,
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: stopping processes (grace ${cli.shutdownGraceMs} ms)`);
    server.shutdown(cli.shutdownGraceMs).finally(() => process.exit(0));
  };
  onSignal("SIGTERM", () => stop("SIGTERM"));
  onSignal("SIGINT", () => stop("SIGINT"));

  if (cli.listen.kind === "ws") {
    console.error("exec-server: the websocket transport is not available in this build");
    return 2;
  }
  const conn = new StdioConnection(stdinReadable(), stdoutWritable(), {
    maxMessageBytes: server.options.maxMessageBytes,
    highWaterBytes: server.options.outputHighWaterBytes,
  });
  logger.info(`exec-server ${VERSION} serving stdio (${runtimeDescription()})`);
  await server.serve(conn);
  await conn.close();
  return 0;
}
