/**
 * The rules a process start must satisfy, written once: the server checks
 * every `process/start` with them, and the client and the local
 * environment check a spawn with them before anything is sent or run, so
 * that bad input fails the same way everywhere. A violation is an
 * {@linkcode RpcError} (-32602, or -32600 for an unknown sandbox mode); the
 * client turns it into a `TypeError` with the same message.
 *
 * @module
 */
import { invalidParams } from "./errors.ts";
import type { ProcessStartParams, TerminalSize } from "./methods.ts";
import { checkSandboxParams } from "./sandbox_params.ts";
import type { SandboxPolicy } from "./sandbox_policy.ts";
import { absolutePath, optionalBoolean, paramsObject, requireBoolean } from "./validate.ts";
import { requireIntegerInRange, requireNonEmptyString, requireString } from "./validate.ts";
import { requireStringArray, requireStringRecord } from "./validate.ts";

/** The largest terminal dimension accepted. */
export const MAX_TERMINAL_DIM = 65535;

/**
 * Check a terminal size: whole numbers from 1 to 65535. `prefix` names the
 * object in messages (`"size."` gives "size.rows must be ...").
 *
 * @throws {RpcError} -32602 naming the bad dimension
 */
export function checkTerminalSize(value: unknown, prefix = ""): TerminalSize {
  const s = paramsObject(value, prefix ? prefix.slice(0, -1) : "size");
  const dim = (name: "rows" | "cols") =>
    requireIntegerInRange({ [prefix + name]: s[name] }, prefix + name, 1, MAX_TERMINAL_DIM);
  return { rows: dim("rows"), cols: dim("cols") };
}

function checkArgv(p: Record<string, unknown>): string[] {
  const argv = requireStringArray(p, "argv");
  argv.forEach((arg, i) => {
    // No exec can carry a NUL.
    if (arg.includes("\0")) throw invalidParams(`argv[${i}] must not contain NUL`);
  });
  if (argv[0] === "") throw invalidParams("argv[0] must not be empty: it names the program");
  return argv;
}

function checkArg0(p: Record<string, unknown>, argv: string[], tty: boolean): string | null {
  if (p.arg0 === undefined || p.arg0 === null) return null;
  if (typeof p.arg0 !== "string") {
    throw invalidParams(`arg0 must be a string or null, got ${JSON.stringify(p.arg0)}`);
  }
  // A terminal child is exec'd by name.
  if (tty && p.arg0 !== argv[0]) {
    throw invalidParams(
      `arg0 ${JSON.stringify(p.arg0)} cannot differ from argv[0] for a tty process`,
    );
  }
  return p.arg0;
}

/**
 * `process/start` params once checked: the sandbox, if any, read into the
 * permission set it asks for.
 */
export interface CheckedStart extends Omit<ProcessStartParams, "sandbox"> {
  /** The permission set; null or absent to run directly. */
  sandbox?: SandboxPolicy | null;
}

/**
 * Read and check `process/start` params.
 *
 * @example
 * ```ts
 * import { checkStartParams } from "./spawn_rules.ts";
 * const start = checkStartParams({
 *   processId: "p1", argv: ["ls"], cwd: "/tmp", env: {}, tty: false,
 * });
 * console.log(start.arg0, start.pipeStdin); // null false
 * ```
 * @throws {RpcError} -32602 naming the bad field (-32600 for a sandbox)
 */
export function checkStartParams(params: unknown): CheckedStart {
  const p = paramsObject(params, "process/start");
  const processId = requireNonEmptyString(p, "processId");
  const argv = checkArgv(p);
  const cwd = absolutePath(requireString(p, "cwd"), "cwd");
  const env = requireStringRecord(p, "env");
  const tty = requireBoolean(p, "tty");
  const arg0 = checkArg0(p, argv, tty);
  const sandbox = checkSandboxParams(p.sandbox);
  const pipeStdin = optionalBoolean(p, "pipeStdin", false);
  const size = p.size === undefined || p.size === null
    ? undefined
    : checkTerminalSize(p.size, "size.");
  return { processId, argv, cwd, env, tty, arg0, pipeStdin, size, sandbox };
}
