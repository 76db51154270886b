/**
 * Whether this host can sandbox: `bwrap` on the server's `PATH`, and able
 * to create the namespaces a sandbox needs (a container or a kernel
 * setting can forbid them). Found out once, by running a real sandbox, and
 * remembered for the life of the process.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { access, constants } from "node:fs/promises";
import process from "node:process";

/** What {@linkcode bwrapSupport} found. */
export type BwrapSupport =
  | {
    /** Sandboxed processes can be started. */
    available: true;
    /** The `bwrap` executable. */
    path: string;
    /** Its version, e.g. `"0.8.0"`. */
    version: string;
    /** Whether it accepts `--argv0` (bubblewrap 0.9 and later). */
    argv0: boolean;
    /**
     * An `env` that takes `--default-signal` (GNU coreutils 8.31 and later),
     * which a terminal's sandbox needs to keep ^C for the command (see
     * launch.ts); undefined where there is none.
     */
    envWithDefaultSignal?: string;
  }
  | {
    /** Sandboxed processes are refused. */
    available: false;
    /** Why, and how to fix it. */
    reason: string;
  };

/** How long the probe sandbox may take before the host counts as unable. */
const PROBE_TIMEOUT_MS = 10_000;

const cache = new Map<string, Promise<BwrapSupport>>();

/**
 * Find and try `bwrap` along `searchPath` (default: the server's `PATH`).
 *
 * @example
 * ```ts
 * import { bwrapSupport } from "./bwrap_support.ts";
 * const support = await bwrapSupport();
 * console.log(support.available ? support.version : support.reason);
 * ```
 */
export function bwrapSupport(searchPath: string = process.env.PATH ?? ""): Promise<BwrapSupport> {
  let found = cache.get(searchPath);
  if (!found) cache.set(searchPath, found = probe(searchPath));
  return found;
}

async function probe(searchPath: string): Promise<BwrapSupport> {
  if (process.platform !== "linux") {
    return {
      available: false,
      reason: `sandboxing needs Linux and bubblewrap; this is ${process.platform}`,
    };
  }
  const path = await findExecutable("bwrap", searchPath);
  if (!path) {
    return {
      available: false,
      reason: `bwrap (bubblewrap) was not found in PATH ${JSON.stringify(searchPath)}; ` +
        "install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)",
    };
  }
  const env = await findExecutable("env", searchPath);
  const found = await run("/bin/sh", ["-c", PROBE_SCRIPT, path, env ?? ""]);
  const line = (key: string) =>
    found.output.split("\n").find((l) => l.startsWith(`${key}: `))?.slice(key.length + 2);
  const trial = line("trial") ?? found.output;
  if (trial !== "ok") {
    return {
      available: false,
      reason: `${path} cannot create a sandbox here: ${trial || "no output"}; ` +
        "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, " +
        "or kernel.apparmor_restrict_unprivileged_userns=0) or run the server where they are allowed",
    };
  }
  return {
    available: true,
    path,
    version: (line("version") ?? "").replace(/^bubblewrap\s*/, ""),
    argv0: line("argv0") === "yes",
    ...(env && line("env") === "ok" ? { envWithDefaultSignal: env } : {}),
  };
}

/**
 * Everything the probe asks, in one shell: each spawn from the server
 * blocks its event loop for a few ms, the shell's own do not. `$0` is
 * bwrap, `$1` an `env` (or empty).
 */
const PROBE_SCRIPT = [
  `echo "version: $("$0" --version 2>&1)"`,
  `"$0" --help 2>&1 | grep -q -e --argv0 && echo "argv0: yes"`,
  `if out=$("$0" --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-ipc ` +
  `--unshare-net --die-with-parent --new-session -- true 2>&1); then echo "trial: ok"; ` +
  `else echo "trial: $(echo "$out" | tr '\n' ' ')"; fi`,
  `[ -n "$1" ] && "$1" --default-signal=INT true 2>/dev/null && echo "env: ok"`,
  "true",
].join("\n");

async function findExecutable(name: string, searchPath: string): Promise<string | undefined> {
  for (const dir of searchPath.split(":")) {
    if (!dir.startsWith("/")) continue;
    const candidate = `${dir}/${name}`;
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

function run(file: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: PROBE_TIMEOUT_MS }, (err, stdout, stderr) => {
      resolve({ ok: !err, output: `${stdout}${stderr}`.trim() });
    });
  });
}
