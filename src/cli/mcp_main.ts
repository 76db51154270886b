/**
 * `exec-server mcp`: connect to the target (an exec-server in this
 * process, on a websocket, or over ssh), put the MCP tools over it, and
 * serve them on stdio or Streamable HTTP until the client goes away or a
 * signal comes. Ending kills every command the tools started.
 *
 * @module
 */
import { statSync } from "node:fs";
import process from "node:process";
import { ExecServerClient } from "../client/client.ts";
import { connectInProcess } from "../client/connect/in_process.ts";
import { Environment } from "../client/environment.ts";
import type { SandboxOptions } from "../client/spawn_options.ts";
import type { SshBootstrapOptions } from "../client/ssh_bootstrap.ts";
import { ExecMcp } from "../mcp/exec_mcp.ts";
import { serveMcpHttp } from "../mcp/http_endpoint.ts";
import { serveMcpStdio } from "../mcp/sdk_server.ts";
import { isSingleExecutable, onSignal } from "../runtime/runtime.ts";
import { ListenError } from "../runtime/websocket_server.ts";
import { createLogger, type Logger } from "../server/logger.ts";
import { readTokenFile, WebSocketConfigError } from "../transport/websocket_auth.ts";
import { VERSION } from "../version.ts";
import { UsageError } from "./args.ts";
import { MCP_HELP, type McpCliOptions, type McpTargetSpec, parseMcpArgs } from "./mcp_args.ts";
import { prepareProcess } from "./prepare_process.ts";
import { LISTENING_PREFIX, TOKEN_PREFIX } from "./websocket_main.ts";

/** How the target is named to the model and in errors. */
function targetName(spec: McpTargetSpec): string {
  return spec.kind === "local"
    ? "this host"
    : spec.kind === "ws"
    ? spec.url
    : `the ssh host ${spec.destination}`;
}

/** Connect to where the tools act. */
async function openTarget(spec: McpTargetSpec, logger: Logger): Promise<ExecServerClient> {
  if (spec.kind === "local") {
    prepareProcess(logger);
    return await connectInProcess({ logger });
  }
  if (spec.kind === "ws") {
    const token = spec.tokenFile ? (await readTokenFile(spec.tokenFile)).token : undefined;
    return await ExecServerClient.connectWebSocket(spec.url, { token });
  }
  const sshArgs = spec.sshOptions.flatMap((o) => ["-o", o]);
  // The binary uploads itself, so that `--ssh` works on a host without exec-server.
  const bootstrap = spec.bootstrap ??
    (spec.remoteBinary === undefined && isSingleExecutable() ? process.execPath : undefined);
  return await ExecServerClient.connectSsh(spec.destination, {
    sshArgs,
    ...(spec.remoteBinary !== undefined ? { binary: spec.remoteBinary } : {}),
    ...(bootstrap !== undefined ? { bootstrap: bootstrapOption(bootstrap) } : {}),
  });
}

function bootstrapOption(path: string): SshBootstrapOptions {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory()
    ? { binaries: path }
    : { localBinary: path };
}

/** The sandbox for the target, from the flags. */
function sandboxOf(cli: McpCliOptions): SandboxOptions | null {
  if (!cli.sandbox) return null;
  return { write: cli.sandbox.write, deny: cli.sandbox.deny, network: cli.sandbox.network };
}

/**
 * Run `exec-server mcp` with `args` (after `mcp`).
 *
 * @returns the exit code
 */
export async function mcpMain(args: string[]): Promise<number> {
  let cli: McpCliOptions;
  try {
    cli = parseMcpArgs(args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`exec-server mcp: ${err.message}\nRun exec-server mcp --help for usage.`);
    return 2;
  }
  if (cli.help) {
    process.stdout.write(MCP_HELP);
    return 0;
  }
  const logger = createLogger(cli.logLevel);
  let ended!: () => void;
  const end = new Promise<void>((resolve) => ended = resolve);
  onSignal("SIGTERM", () => ended());
  onSignal("SIGINT", () => ended());
  const sandbox = sandboxOf(cli);
  let client: ExecServerClient | undefined;
  let env: Environment | undefined;
  // Connected while the client's handshake is answered: MCP clients give a
  // server little time to start (the Codex CLI one second unless it is
  // `required`), less than an ssh login takes.
  const connect = async () => {
    client = await openTarget(cli.target, logger);
    client.closed.then((info) => {
      // The target dropping (an ssh gone) leaves nothing to serve.
      if (!info.byClient) logger.warn(`the target closed: ${info.reason}`);
      ended();
    });
    env = Environment.remote(client, { sandbox, sandboxFiles: sandbox !== null });
    return env;
  };
  const mcp = new ExecMcp(connect, {
    readOnly: cli.readOnly,
    root: cli.root,
    stripAnsi: cli.stripAnsi,
    targetName: targetName(cli.target),
    version: VERSION,
    onProblem: (m) => logger.warn(m),
  });
  const stop = await serveClients(cli, mcp, logger, ended);
  if (typeof stop === "number") return stop;
  mcp.warmUp();
  await end;
  await stop();
  await mcp.close();
  await env?.close();
  await client?.close().catch(() => {});
  return 0;
}

/** Serve stdio or HTTP; returns how to stop, or an exit code. */
async function serveClients(
  cli: McpCliOptions,
  mcp: ExecMcp,
  logger: Logger,
  ended: () => void,
): Promise<(() => Promise<void>) | number> {
  if (cli.listen.kind === "stdio") {
    const stdio = serveMcpStdio(mcp, { onProblem: (m) => logger.warn(m) });
    stdio.ended.then(ended);
    return () => stdio.close();
  }
  const { hostname, port, path } = cli.listen;
  try {
    const token = cli.tokenFile ? (await readTokenFile(cli.tokenFile)).token : undefined;
    const http = await serveMcpHttp(mcp, {
      hostname,
      port,
      path,
      token,
      noAuth: cli.noAuth,
      allowOrigins: cli.allowOrigins,
      onProblem: (m) => logger.warn(m),
    });
    if (http.tokenGenerated) console.error(`${TOKEN_PREFIX}${http.token}`);
    console.error(`${LISTENING_PREFIX}${http.url}`);
    return () => http.close();
  } catch (err) {
    if (err instanceof WebSocketConfigError || err instanceof ListenError) {
      console.error(`exec-server mcp: ${err.message}`);
      return err instanceof WebSocketConfigError ? 2 : 1;
    }
    throw err;
  }
}
