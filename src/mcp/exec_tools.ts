/**
 * `exec_command`, `write_stdin`, `list_sessions` and `kill_session`: a call
 * waits at most its yield, then answers with what the command printed so
 * far and either its exit code or the session to poll. The command itself
 * runs on regardless of the call: a yield, a client's timeout or a
 * cancellation ends only the wait.
 *
 * @module
 */
import type { CommandPoll, ExecSessions } from "./exec_sessions.ts";
import { commandEnv, type LoginInfo } from "./login_shell.ts";
import {
  type Args,
  optionalBoolean,
  optionalInt,
  optionalString,
  optionalStringMap,
  optionalStrings,
  type PathResolver,
  requiredInt,
  ToolInputError,
} from "./tool_args.ts";
import {
  DEFAULT_OUTPUT_BYTES,
  EXEC_YIELD_MS,
  MAX_OUTPUT_BYTES,
  MAX_YIELD_MS,
  STDIN_YIELD_MS,
} from "./tool_list.ts";
import { textResult, type ToolResult } from "./tool_result.ts";

/** What the command tools work with. */
export interface ExecToolContext {
  /** The commands and their output. */
  sessions: ExecSessions;
  /** Path arguments made absolute. */
  paths: PathResolver;
  /** The target's user (asked once). */
  login(): Promise<LoginInfo>;
  /** Aborted when the client cancels the call. */
  signal?: AbortSignal;
  /** The MCP connection the call came on: its commands end with it. */
  owner?: object;
}

/** The answer of a call the client cancelled; the SDK does not send it. */
const CANCELLED: ToolResult = textResult("cancelled");

/** How long a `kill_session` waits for the exit it caused, in ms. */
const KILL_WAIT_MS = 5_000;

/** A whole number argument, clamped to `max` (a model asking for more gets the most). */
function clamped(args: Args, name: string, min: number, max: number, fallback: number): number {
  const n = optionalInt(args, name, min);
  return n === undefined ? fallback : Math.min(n, max);
}

/** `exec_command`. */
export async function execCommand(ctx: ExecToolContext, args: Args): Promise<ToolResult> {
  const cmd = optionalString(args, "cmd");
  const argv = optionalStrings(args, "argv");
  if ((cmd === undefined) === (argv === undefined)) {
    throw new ToolInputError("give either cmd (a shell command) or argv (a program and arguments)");
  }
  if (cmd !== undefined && cmd.trim() === "") throw new ToolInputError("cmd is empty");
  if (argv !== undefined && argv.length === 0) throw new ToolInputError("argv is empty");
  const tty = optionalBoolean(args, "tty") ?? false;
  const yieldMs = clamped(args, "yield_time_ms", 0, MAX_YIELD_MS, EXEC_YIELD_MS);
  const cap = clamped(args, "max_output_bytes", 1, MAX_OUTPUT_BYTES, DEFAULT_OUTPUT_BYTES);
  const extraEnv = optionalStringMap(args, "env");
  const login = await ctx.login();
  const cwd = args.workdir === undefined || args.workdir === null
    ? ctx.paths.root ?? login.home
    : ctx.paths.resolve(args, "workdir");
  const id = await ctx.sessions.start({
    argv: cmd !== undefined ? [login.shell, "-lc", cmd] : argv!,
    cwd,
    env: commandEnv(login, tty, extraEnv),
    tty,
    display: cmd ?? argv!.join(" "),
  }, ctx.owner);
  const poll = await ctx.sessions.poll(id, yieldMs, cap, ctx.signal);
  return poll ? commandResult(poll) : CANCELLED;
}

/** `write_stdin`. */
export async function writeStdin(ctx: ExecToolContext, args: Args): Promise<ToolResult> {
  const id = requiredInt(args, "session_id", 1);
  const chars = optionalString(args, "chars") ?? "";
  const yieldMs = clamped(args, "yield_time_ms", 0, MAX_YIELD_MS, STDIN_YIELD_MS);
  const cap = clamped(args, "max_output_bytes", 1, MAX_OUTPUT_BYTES, DEFAULT_OUTPUT_BYTES);
  await ctx.sessions.write(id, chars);
  const poll = await ctx.sessions.poll(id, yieldMs, cap, ctx.signal);
  return poll ? commandResult(poll) : CANCELLED;
}

/** `list_sessions`. */
export function listSessions(ctx: ExecToolContext): ToolResult {
  const sessions = ctx.sessions.list();
  const lines = sessions.map((s) =>
    `${s.session_id}: ${s.running ? "running" : `exited ${s.exit_code}`}` +
    `${s.tty ? ", tty" : ""}, ${s.unread_bytes} bytes unread, ` +
    `${(s.elapsed_ms / 1000).toFixed(1)} s: ${s.command}`
  );
  return textResult(lines.length ? lines.join("\n") : "No sessions.", { sessions });
}

/** `kill_session`. */
export async function killSession(ctx: ExecToolContext, args: Args): Promise<ToolResult> {
  const id = requiredInt(args, "session_id", 1);
  const signal = optionalString(args, "signal");
  await ctx.sessions.kill(id, signal);
  const poll = await ctx.sessions.poll(id, KILL_WAIT_MS, DEFAULT_OUTPUT_BYTES, ctx.signal);
  return poll ? commandResult(poll) : CANCELLED;
}

/** The answer to a wait: a status line, then the output. */
export function commandResult(poll: CommandPoll): ToolResult {
  const seconds = (poll.elapsedMs / 1000).toFixed(1);
  const status = poll.exit
    ? `Exit code ${poll.exit.exitCode}${poll.exit.signal ? ` (${poll.exit.signal})` : ""} ` +
      `after ${seconds} s.`
    : `Still running after ${seconds} s as session ${poll.sessionId}: ` +
      `poll or type with write_stdin, stop with kill_session.`;
  const truncated = poll.omittedBytes > 0;
  const note = truncated
    ? `\n${poll.omittedBytes} of ${poll.totalBytes} output bytes were left out (the middle).`
    : "";
  const output = poll.text === "" ? "\nNo new output." : `\nOutput:\n${poll.text}`;
  return textResult(status + note + output, {
    // Complete on its own: some clients (the Codex CLI) show the model only this.
    output: poll.text,
    exit_code: poll.exit?.exitCode ?? null,
    session_id: poll.exit ? null : poll.sessionId,
    truncated,
    ...(truncated ? { omitted_bytes: poll.omittedBytes } : {}),
    ...(poll.exit?.signal ? { signal: poll.exit.signal } : {}),
  });
}
