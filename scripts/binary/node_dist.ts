/**
 * The official Node build for a target, from the npm registry (the only
 * registry these machines reach), kept in a per-user cache so that it is
 * fetched once. `npm pack` checks the tarball against the registry's
 * integrity hash before anything is unpacked.
 *
 * @module
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { run } from "./shell.ts";
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
    const out = run("npm", ["pack", `${pkg}@${version}`, "--silent"], "npm pack", work);
    const tarball = join(work, out.trim().split("\n").at(-1)!);
    run("tar", ["-xzf", tarball, "package/bin/node", "package/include/node"], "tar", work);
    rmSync(dir, { recursive: true, force: true });
    // Renamed into place whole, so a cut fetch never leaves half a build.
    renameSync(join(work, "package"), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!existsSync(node)) throw new Error(`${pkg}@${version} has no bin/node`);
  return { node, dir, version };
}
