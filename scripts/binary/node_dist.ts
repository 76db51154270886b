/**
 * The official Node build for a target, from the npm registry (the only
 * registry these machines reach), kept in a per-user cache so that it is
 * fetched once. `npm pack` checks the tarball against the registry's
 * integrity hash before anything is unpacked.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { type Target, TARGET_INFO } from "./targets.ts";

/** A fetched Node build. */
export interface NodeDist {
  /** The `node` executable (for the target's platform). */
  node: string;
  /** The directory holding `include/node` (headers for native addons). */
  dir: string;
  /** Its version, e.g. `22.23.2`. */
  version: string;
}

/** Where fetched Node builds are kept: `$XDG_CACHE_HOME/exec-server-build` or `~/.cache/...`. */
export function buildCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg && xdg.startsWith("/") ? xdg : join(process.env.HOME ?? "/tmp", ".cache");
  return join(base, "exec-server-build");
}

function sh(cmd: string, args: string[], cwd: string, what: string): string {
  const res = spawnSync(cmd, args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 600_000,
    maxBuffer: 16 << 20,
  });
  if (res.status !== 0) {
    throw new Error(
      `${what}: ${cmd} ${args.join(" ")} failed: ${res.error?.message ?? ""}${res.stderr}`,
    );
  }
  return res.stdout;
}

/**
 * The Node build of `version` for `target`, fetched into the cache when it
 * is not there yet.
 *
 * @throws {Error} when npm cannot fetch it or the tarball lacks `bin/node`
 */
export function fetchNode(target: Target, version: string): NodeDist {
  const pkg = TARGET_INFO[target].nodePackage;
  const dir = join(buildCacheDir(), `${pkg}-${version}`);
  const node = join(dir, "bin/node");
  if (existsSync(node) && existsSync(join(dir, "include/node/node_api.h"))) {
    return { node, dir, version };
  }
  mkdirSync(buildCacheDir(), { recursive: true });
  const work = mkdtempSync(join(buildCacheDir(), `.fetch-${pkg}-`));
  try {
    console.error(`build_binary: fetching ${pkg}@${version} from the npm registry`);
    const out = sh("npm", ["pack", `${pkg}@${version}`, "--silent"], work, "npm pack");
    const tarball = join(work, out.trim().split("\n").at(-1)!);
    sh("tar", ["-xzf", tarball, "package/bin/node", "package/include/node"], work, "tar");
    rmSync(dir, { recursive: true, force: true });
    // Renamed into place whole, so a cut fetch never leaves half a build.
    renameSync(join(work, "package"), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!existsSync(node)) throw new Error(`${pkg}@${version} has no bin/node`);
  return { node, dir, version };
}
