/**
 * Starting a command inside a bubblewrap sandbox: the checks made first,
 * the command line, and the handle whose signals reach the command rather
 * than bubblewrap's own monitor.
 *
 * @module
 */
import { realpath, stat } from "node:fs/promises";
import process from "node:process";
import type { SandboxPolicy, SandboxRule } from "../../protocol/sandbox_policy.ts";
import { accessAt, mountOrder } from "../../protocol/sandbox_policy.ts";
import { descendantStats } from "../kill_tree.ts";
import { checkCwd, resolveProgram, SpawnCheckError } from "../spawn_checks.ts";
import type { ProcessHandle } from "../types.ts";
import { bwrapArgs, type SandboxMount } from "./bwrap_args.ts";
import { bwrapSupport } from "./bwrap_support.ts";

/** Thrown when a sandbox was asked for and this host cannot provide one. */
export class SandboxUnavailableError extends Error {
  /** @param reason why, and how to fix it */
  constructor(reason: string) {
    super(`sandbox unavailable: ${reason}`);
    this.name = "SandboxUnavailableError";
  }
}

/** What the sandboxed command is. */
export interface SandboxedCommand {
  /** Program and arguments as asked. */
  argv: string[];
  /** The `argv[0]` the command should see, when it differs. */
  arg0?: string | null;
  /** Working directory. */
  cwd: string;
  /** The command's environment (its `PATH` finds the program). */
  env: Record<string, string>;
  /** On a terminal. */
  tty: boolean;
}

/**
 * The command line that runs `command` under `policy`: `bwrap`, its
 * arguments, `--`, the command. The program and working directory are
 * checked first, so that a missing one fails as such (with its errno) and
 * one the sandbox hides fails with EACCES instead of a bubblewrap message.
 *
 * @throws {SandboxUnavailableError} when bubblewrap is missing or cannot work here
 * @throws {SpawnCheckError} for a missing, unrunnable or hidden program or cwd
 */
export async function sandboxArgv(
  command: SandboxedCommand,
  policy: SandboxPolicy,
): Promise<string[]> {
  const support = await bwrapSupport();
  if (!support.available) throw new SandboxUnavailableError(support.reason);
  const { argv, cwd, env } = command;
  const arg0 = command.arg0 && command.arg0 !== argv[0] ? command.arg0 : null;
  if (arg0 && !support.argv0) {
    throw new SandboxUnavailableError(
      `arg0 needs bubblewrap 0.9 or later (--argv0); ${support.path} is ${support.version}`,
    );
  }
  await checkCwd(cwd);
  const program = await resolveProgram(argv[0], env, cwd);
  const { rules, mounts } = await prepareMounts(policy);
  const real = { rules, network: policy.network };
  for (const [what, path] of [["cwd", cwd], ["program", program]]) {
    if (accessAt(real, await realpath(path)) === "deny") {
      throw new SpawnCheckError(`${what} ${path} is not readable inside the sandbox`, "EACCES");
    }
  }
  const args = bwrapArgs({ mounts, network: policy.network, tty: command.tty, cwd, argv0: arg0 });
  const resetter = support.envWithDefaultSignal;
  const usable = resetter !== undefined && !argv[0].includes("=") &&
    accessAt(real, await realpath(resetter)) !== "deny";
  if (!command.tty || !usable) {
    return [support.path, ...args, "--", ...argv];
  }
  // On a terminal, bubblewrap's monitor is in the foreground group with the
  // command: a typed ^C would kill it, and --die-with-parent the command
  // before its handlers ran. So the monitor ignores the terminal's signals
  // and the command gets them back by default (ignoring survives exec).
  return [
    "/bin/sh",
    "-c",
    `trap '' ${TERMINAL_SIGNALS.join(" ")}; exec "$0" "$@"`,
    support.path,
    ...args,
    "--",
    resetter,
    `--default-signal=${TERMINAL_SIGNALS.join(",")}`,
    ...argv,
  ];
}

/** The signals a terminal sends its foreground group on ^C, ^\ and ^Z. */
const TERMINAL_SIGNALS = ["INT", "QUIT", "TSTP"];

/**
 * The rules with their paths resolved (a rule on a symlink applies where
 * it leads) and the mounts for those that exist; a rule on a missing path
 * mounts nothing.
 */
async function prepareMounts(
  policy: SandboxPolicy,
): Promise<{ rules: SandboxRule[]; mounts: SandboxMount[] }> {
  const aliases = new Map<string, string>();
  const directories = new Set<string>();
  const found = await Promise.all(policy.rules.map(async (rule) => {
    try {
      const path = await realpath(rule.path);
      if ((await stat(path)).isDirectory()) directories.add(path);
      if (path !== rule.path && !aliases.has(path)) aliases.set(path, rule.path);
      return { path, access: rule.access };
    } catch {
      return undefined;
    }
  }));
  const rules = found.filter((r): r is SandboxRule => r !== undefined);
  const mounts = mountOrder({ rules, network: policy.network }).map((r) => ({
    ...r,
    alias: aliases.get(r.path),
    isDirectory: directories.has(r.path),
  }));
  return { rules, mounts };
}

/**
 * The handle of a sandboxed process. Its pid is bubblewrap's monitor, which
 * a signal would kill (taking the sandbox with it at once), so signals other
 * than SIGKILL go to the processes inside instead; SIGKILL goes to the
 * whole tree, and the sandbox's pid namespace ends with it.
 */
export function sandboxedHandle(handle: ProcessHandle): ProcessHandle {
  let done = false;
  void handle.finished.then(() => done = true, () => done = true);
  const inside = async (signal: string): Promise<void> => {
    if (done) return;
    for (const s of await descendantStats(handle.pid)) {
      // bubblewrap's own processes (the monitor's child, the namespace's init).
      if (s.comm === "bwrap") continue;
      try {
        process.kill(s.pid, signal);
      } catch {
        // Already gone.
      }
    }
  };
  return {
    get pid() {
      return handle.pid;
    },
    get finished() {
      return handle.finished;
    },
    get stdinOpen() {
      return handle.stdinOpen;
    },
    write: (data) => handle.write(data),
    closeStdin: () => handle.closeStdin(),
    resize: (size) => handle.resize(size),
    pause: () => handle.pause(),
    resume: () => handle.resume(),
    signal: (signal) => void inside(signal),
    killTree: (signal) => signal === "SIGKILL" ? handle.killTree(signal) : inside(signal),
  };
}
