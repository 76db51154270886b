/**
 * The MCP façade's core: the tools of `TOOLS` over one
 * {@linkcode Environment} (this host, or a remote one through the client).
 * One `ExecMcp` holds the commands; each MCP connection (sdk_server.ts)
 * calls into it, so every client of an HTTP endpoint sees the same ones.
 *
 * @module
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { Environment } from "../client/environment.ts";
import { FileSystemError } from "../fs/types.ts";
import { ExecSessions } from "./exec_sessions.ts";
import {
  execCommand,
  type ExecToolContext,
  killSession,
  listSessions,
  writeStdin,
} from "./exec_tools.ts";
import { listDirectoryTool, searchFilesTool } from "./file_listing.ts";
import {
  createDirectoryTool,
  editFileTool,
  type FileToolContext,
  getFileInfoTool,
  moveFileTool,
  readFileTool,
  removeTool,
  writeFileTool,
} from "./file_tools.ts";
import { type LoginInfo, probeLogin } from "./login_shell.ts";
import { type Args, PathResolver, ToolInputError } from "./tool_args.ts";
import { type ToolDescriptor, toolsFor } from "./tool_list.ts";
import { errorResult, type ToolResult } from "./tool_result.ts";

/** Options of {@linkcode ExecMcp}. */
export interface ExecMcpOptions {
  /** Offer only the tools that change nothing (default false). */
  readOnly?: boolean;
  /** Resolve relative paths (and default the working directory) here. */
  root?: string;
  /** Strip terminal escape sequences from tty output (default false). */
  stripAnsi?: boolean;
  /** Where the tools act, for the instructions the client shows its model. */
  targetName?: string;
  /** The server's version in `initialize`. */
  version?: string;
  /** Told about calls that failed for reasons other than their input. */
  onProblem?: (message: string) => void;
}

type Context = ExecToolContext & FileToolContext;
type Handler = (ctx: Context, args: Args) => ToolResult | Promise<ToolResult>;

const HANDLERS: Record<string, Handler> = {
  exec_command: execCommand,
  write_stdin: writeStdin,
  list_sessions: (ctx) => listSessions(ctx),
  kill_session: killSession,
  read_file: readFileTool,
  write_file: writeFileTool,
  edit_file: editFileTool,
  list_directory: listDirectoryTool,
  search_files: searchFilesTool,
  get_file_info: getFileInfoTool,
  create_directory: createDirectoryTool,
  move_file: moveFileTool,
  remove: removeTool,
};

/** Errors whose message is the answer the model needs; anything else is reported too. */
function expected(err: unknown): boolean {
  if (err instanceof ToolInputError || err instanceof FileSystemError) return true;
  const name = err instanceof Error ? err.name : "";
  return name === "SpawnError" || name === "ServerError" || name === "ProcessError" ||
    name === "TypeError";
}

/**
 * The tools over `env`.
 *
 * @example
 * ```ts
 * import { Environment } from "../client/environment.ts";
 * import { ExecMcp } from "./exec_mcp.ts";
 * const mcp = new ExecMcp(Environment.local(), { root: "/srv/app" });
 * const r = await mcp.call("exec_command", { cmd: "ls" });
 * console.log(r.content[0]);
 * await mcp.close();
 * ```
 */
export class ExecMcp {
  /** The tools offered. */
  readonly tools: readonly ToolDescriptor[];
  #target: () => Promise<Environment>;
  #env: Promise<{ env: Environment; sessions: ExecSessions }> | undefined;
  #options: ExecMcpOptions;
  #paths: PathResolver;
  #login: Promise<LoginInfo> | undefined;

  /**
   * Offer the tools over `target`.
   *
   * @param target where the tools act, or how to reach it: connecting
   *   waits for the first call, so that a client's handshake never waits
   *   for an ssh (a failed connect is tried again by the next call).
   *   Closing this `ExecMcp` does not close the environment.
   * @param options what the tools may do, and how they describe themselves
   */
  constructor(target: Environment | (() => Promise<Environment>), options: ExecMcpOptions = {}) {
    this.#target = typeof target === "function" ? target : () => Promise.resolve(target);
    this.#options = options;
    this.#paths = new PathResolver(options.root);
    this.tools = toolsFor(options.readOnly ?? false, options.root);
  }

  /** What the client shows its model about these tools (MCP's `instructions`). */
  get instructions(): string {
    const where = this.#options.targetName ?? "this host";
    const paths = this.#options.root
      ? `Relative paths resolve against ${this.#options.root}.`
      : "Paths must be absolute.";
    return `Commands and files on ${where}. ${paths} Long commands return a session_id: ` +
      `poll it with write_stdin.`;
  }

  /** The server's version, as `initialize` names it. */
  get version(): string {
    return this.#options.version ?? "0";
  }

  /** Kill the trees of the commands `owner` (one MCP connection) started that still run. */
  async releaseOwner(owner: object): Promise<void> {
    const connected = await this.#env?.catch(() => undefined);
    await connected?.sessions.closeOwner(owner);
  }

  /**
   * Run one tool. A failure the model can act on is an `isError` result;
   * an unknown tool is a protocol error (-32602), as MCP asks.
   */
  async call(
    name: string,
    args: Args,
    call: { signal?: AbortSignal; owner?: object } = {},
  ): Promise<ToolResult> {
    const handler = this.tools.some((t) => t.name === name) ? HANDLERS[name] : undefined;
    if (!handler) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `unknown tool ${JSON.stringify(name)}; the tools are ${
          this.tools.map((t) => t.name).join(", ")
        }`,
      );
    }
    try {
      const { env, sessions } = await this.#connected();
      const ctx: Context = {
        sessions,
        paths: this.#paths,
        fs: env.fs,
        login: () => this.#loginInfo(env),
        ...call,
      };
      return await handler(ctx, args);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (!expected(err)) this.#options.onProblem?.(`${name} failed: ${message}`);
      return errorResult(message);
    }
  }

  /** Start connecting to the target now, so that the first call does not wait. */
  warmUp(): void {
    this.#connected().catch((err) => this.#options.onProblem?.(err.message));
  }

  /** Kill every command still running. */
  async close(): Promise<void> {
    const connected = await this.#env?.catch(() => undefined);
    await connected?.sessions.close();
  }

  /** The target, connected once (again after a failed try). */
  #connected(): Promise<{ env: Environment; sessions: ExecSessions }> {
    this.#env ??= this.#target().then(
      (env) => ({
        env,
        sessions: new ExecSessions(env.process, { stripAnsi: this.#options.stripAnsi }),
      }),
      (err) => {
        this.#env = undefined;
        const where = this.#options.targetName ?? "the target";
        throw new Error(`cannot reach ${where}: ${err instanceof Error ? err.message : err}`);
      },
    );
    return this.#env;
  }

  #loginInfo(env: Environment): Promise<LoginInfo> {
    // Asked once; a failed probe is asked again by the next command.
    this.#login ??= probeLogin(env.process).catch((err) => {
      this.#login = undefined;
      throw err;
    });
    return this.#login;
  }
}
