/**
 * Who the commands run as on the target host: the user's name, home and
 * login shell, read once from the host itself (a remote host's user is not
 * this process's), and the environment a command gets from them.
 *
 * @module
 */
import type { ExecProcess } from "../client/process_handle.ts";
import { DEFAULT_PATH } from "../client/spawn_options.ts";

/** The target's user, as its passwd entry says. */
export interface LoginInfo {
  /** The user name. */
  user: string;
  /** The home directory. */
  home: string;
  /** The login shell that runs `cmd` (`/bin/sh` when the entry names none usable). */
  shell: string;
}

/** Shells known to take `-l -c COMMAND`. */
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash"]);

// getent knows NSS users (LDAP, sssd); /etc/passwd is the fallback where
// it is missing (busybox images).
const PROBE = 'u=$(id -un); printf "%s\\n" "$u"; ' +
  '{ getent passwd "$(id -u)" 2>/dev/null || grep "^$u:" /etc/passwd; } | head -n 1; ' +
  'printf "%s\\n" "$HOME"';

/**
 * The login info in the probe's output: the user, the passwd line, and
 * `$HOME` as a fallback for the home.
 *
 * @example
 * ```ts
 * import { parseLoginProbe } from "./login_shell.ts";
 * parseLoginProbe("ann\nann:x:1000:1000::/home/ann:/bin/zsh\n/home/ann\n");
 * // { user: "ann", home: "/home/ann", shell: "/bin/zsh" }
 * ```
 */
export function parseLoginProbe(output: string): LoginInfo {
  const [user = "", entry = "", envHome = ""] = output.split("\n");
  const fields = entry.split(":");
  const home = fields.length >= 7 && fields[5].startsWith("/")
    ? fields[5]
    : envHome.startsWith("/")
    ? envHome
    : "/";
  const named = fields.length >= 7 ? fields[6].trim() : "";
  const base = named.slice(named.lastIndexOf("/") + 1);
  const shell = named.startsWith("/") && SHELLS.has(base) ? named : "/bin/sh";
  return { user, home, shell };
}

/** Ask the host who its commands run as. */
export async function probeLogin(process: ExecProcess): Promise<LoginInfo> {
  const r = await process.run(["/bin/sh", "-c", PROBE], { timeoutMs: 20_000 });
  if (r.exitCode !== 0 && r.stdout === "") {
    throw new Error(`cannot tell the target's user: /bin/sh exited ${r.exitCode}: ${r.stderr}`);
  }
  return parseLoginProbe(r.stdout);
}

/**
 * The environment of a command: what a login would set, no pagers (a pager
 * waits for keys nobody types), and for pipes a terminal-less TERM; the
 * call's own variables win.
 */
export function commandEnv(
  login: LoginInfo,
  tty: boolean,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: DEFAULT_PATH,
    HOME: login.home,
    USER: login.user,
    LOGNAME: login.user,
    SHELL: login.shell,
    PAGER: "cat",
    GIT_PAGER: "cat",
    ...(tty ? { TERM: "xterm-256color" } : { TERM: "dumb", NO_COLOR: "1" }),
    ...extra,
  };
}
