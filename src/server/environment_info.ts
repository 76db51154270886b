/**
 * What a Codex-dialect session tells the CLI about this host: real values
 * read when asked (login shell, home, working and temporary directories,
 * OS), and only the capabilities that are implemented.
 *
 * @module
 */
import { existsSync } from "node:fs";
import os from "node:os";
import { basename, resolve } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import type { EnvironmentInfo } from "../protocol/codex.ts";

/**
 * The `executorVersion` sent: the upstream release whose environment
 * protocol this server speaks. The CLI compares it with the versions that
 * introduced a feature (`capabilities/discoverV2` wants 0.164.0 or later),
 * so it names the protocol level rather than this package's own version,
 * which the CLI would read as a very old executor.
 */
export const CODEX_PROTOCOL_VERSION = "0.171.0";

/**
 * The capability flags of upstream 0.171 that this server implements.
 * Those left out, and why (docs/protocol.md §9.8): `windowsMxc` (a Windows
 * sandbox), `networkProxy*` and `credentialMasking*` (they need the managed
 * network proxy, a later step; `enforceManagedNetwork` and `networkProxy`
 * are refused until then), `shellSnapshotV2` (the login shell runs every
 * time instead), and the two `linuxRoot*` flags (this sandbox keeps their
 * guarantees in its own way; not yet proved against the CLI's cases).
 */
export const CODEX_CAPABILITIES: Readonly<Record<string, boolean>> = Object.freeze({
  fsWatchMissing: true,
  environmentConfigRead: true,
  httpHeaderEnvVars: true,
  capabilityDiscoveryV2: true,
  capabilityDiscoverySandbox: true,
  sandboxedFileStreaming: true,
  fileWriteStreaming: true,
});

/** The PATH a child gets when neither `envPolicy` nor `env` gives one. */
export const DEFAULT_PATH_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
});

/** The user's login shell: the passwd entry, then $SHELL, then /bin/sh. */
function loginShell(): string {
  let shell: string | undefined;
  try {
    shell = os.userInfo().shell ?? undefined;
  } catch {
    // No passwd entry (a container running as an unknown uid).
  }
  for (const candidate of [shell, process.env.SHELL, "/bin/bash", "/bin/sh"]) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  return "/bin/sh";
}

const fileUri = (path: string): string => pathToFileURL(path).href;

/**
 * This host as the Codex dialect describes it.
 *
 * @example
 * ```ts
 * import { environmentInfo } from "./environment_info.ts";
 * const info = environmentInfo();
 * console.log(info.shell.path, info.platformOs); // e.g. "/bin/bash" "linux"
 * ```
 */
export function environmentInfo(): EnvironmentInfo {
  const shell = loginShell();
  return {
    shell: { name: basename(shell), path: shell },
    executorVersion: CODEX_PROTOCOL_VERSION,
    cwd: fileUri(process.cwd()),
    userHomeDir: fileUri(os.homedir()),
    platformOs: process.platform === "darwin" ? "macos" : process.platform,
    prependPathDirs: [],
    // As upstream: `$TMPDIR` when set (the CLI lets sandboxed commands write there).
    temporaryDirectories: process.env.TMPDIR ? [fileUri(resolve(process.env.TMPDIR))] : [],
    tempDir: fileUri(os.tmpdir()),
    capabilities: { ...CODEX_CAPABILITIES },
  };
}
