/**
 * The bubblewrap command line for a permission set: pure, so every choice
 * of mount and namespace can be tested without running anything.
 *
 * @module
 */
import type { SandboxAccess } from "../../protocol/sandbox_policy.ts";
import { isWithin } from "../../protocol/sandbox_policy.ts";

/** A rule whose path exists, ready to be mounted. */
export interface SandboxMount {
  /** The real path (symlinks resolved), where it is mounted. */
  path: string;
  /** The path as the rule named it, when that was a symlink to `path`. */
  alias?: string;
  /** What the rule allows. */
  access: SandboxAccess;
  /** Whether it is a directory (a denied file is masked differently). */
  isDirectory: boolean;
}

/** How the sandboxed command is run. */
export interface BwrapOptions {
  /** Mounts in mount order (shallow first), only paths that exist. */
  mounts: SandboxMount[];
  /** Whether the network is reachable. */
  network: boolean;
  /** On a terminal: keep the session, so the terminal stays the command's. */
  tty: boolean;
  /** The working directory inside. */
  cwd: string;
  /** The `argv[0]` the command should see, when it differs. */
  argv0?: string | null;
}

/** Where the kernel's own filesystems go; rules there are not mounted. */
const FRESH = ["/dev", "/proc"];

/**
 * The arguments that go between `bwrap` and `--`.
 *
 * A writable rule is a read-write bind, a readable one a read-only bind, a
 * denied directory an empty read-only tmpfs and a denied file `/dev/null`
 * (unreadable and unwritable there). Narrower mounts come later and land
 * on top. `/dev` and `/proc` are fresh. Outside the sandbox's processes
 * nothing is visible (`--unshare-pid`); with the network restricted only a
 * private loopback exists (`--unshare-net`). `--die-with-parent` ends the
 * sandbox when its monitor dies; `--new-session` (pipes only) keeps the
 * command from typing into the server's terminal. Without a readable `/`
 * the root is an empty tmpfs, made read-only last.
 *
 * @example
 * ```ts
 * import { bwrapArgs } from "./bwrap_args.ts";
 * bwrapArgs({
 *   mounts: [
 *     { path: "/", access: "read", isDirectory: true },
 *     { path: "/work", access: "write", isDirectory: true },
 *   ],
 *   network: false, tty: false, cwd: "/work",
 * });
 * // ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--new-session",
 * //  "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
 * //  "--bind", "/work", "/work", "--chdir", "/work"]
 * ```
 */
export function bwrapArgs(options: BwrapOptions): string[] {
  const args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc"];
  if (!options.tty) args.push("--new-session");
  if (!options.network) args.push("--unshare-net");
  const mounts = options.mounts.filter((m) => !FRESH.some((f) => isWithin(m.path, f)));
  const root = mounts.find((m) => m.path === "/" && m.access !== "deny");
  if (root) args.push(...mountArgs(root));
  args.push("--dev", "/dev", "--proc", "/proc");
  const readOnlyLater: string[] = [];
  for (const m of mounts) {
    if (m.path === "/") continue;
    args.push(...mountArgs(m));
    if (m.access === "deny" && m.isDirectory) readOnlyLater.push(m.path);
    // Without the real root the rule's own name must still lead there.
    if (m.alias && !root && m.access !== "deny") args.push("--symlink", m.path, m.alias);
  }
  for (const path of readOnlyLater.reverse()) args.push("--remount-ro", path);
  if (!root) args.push("--remount-ro", "/");
  if (options.argv0) args.push("--argv0", options.argv0);
  args.push("--chdir", options.cwd);
  return args;
}

function mountArgs(m: SandboxMount): string[] {
  switch (m.access) {
    case "write":
      return ["--bind", m.path, m.path];
    case "read":
      return ["--ro-bind", m.path, m.path];
    case "deny":
      return m.isDirectory ? ["--tmpfs", m.path] : ["--ro-bind", "/dev/null", m.path];
  }
}
