/**
 * node-pty's native addon for each target: the one `npm ci` built for this
 * machine (patched to mark PTY masters close-on-exec), a cross-compiled
 * one for linux-arm64 from the same patched source, and node-pty's own
 * prebuilds for macOS, which need their `spawn-helper` beside them.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
} from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { buildCacheDir, type NodeDist } from "./node_dist.ts";
import { onPath } from "./shell.ts";
import { hostTarget, type Target } from "./targets.ts";

/** The files a target's PTY support is made of. */
export interface PtyAddon {
  /** `pty.node`. */
  addon: string;
  /** macOS only: node-pty's `spawn-helper`, which must sit beside the addon. */
  helper?: string;
  /** Where it came from, for the build's log. */
  origin: string;
}

/** The marker scripts/patch_node_pty.cjs puts into the source it patched. */
const PATCH_MARK = "/* exec-server: master close-on-exec */";

/**
 * The addon for `target`, building it when needed.
 *
 * @param root the repository (with node_modules)
 * @param dist the target's Node build (headers for a cross-compile)
 * @throws {Error} when it cannot be found or built
 */
export function ptyAddonFor(root: string, target: Target, dist: NodeDist): PtyAddon {
  const pty = join(root, "node_modules/node-pty");
  if (target.startsWith("darwin-")) {
    const dir = join(pty, "prebuilds", target);
    const addon = join(dir, "pty.node");
    const helper = join(dir, "spawn-helper");
    if (!existsSync(addon) || !existsSync(helper)) {
      throw new Error(`node-pty has no prebuild for ${target} in ${dir}`);
    }
    return { addon, helper, origin: `node-pty prebuild ${target}` };
  }
  if (target === hostTarget()) {
    const addon = join(pty, "build/Release/pty.node");
    if (!existsSync(addon)) throw new Error(`${addon} is missing: run npm ci (node-pty builds it)`);
    return { addon, origin: "built by npm ci (patched)" };
  }
  if (target === "linux-arm64") return crossCompileArm64(root, pty, dist);
  throw new Error(`no way to build node-pty's addon for ${target} on this machine`);
}

/** Cross-compile the patched source for linux-arm64 (Debian's g++-aarch64-linux-gnu). */
function crossCompileArm64(root: string, pty: string, dist: NodeDist): PtyAddon {
  const source = readFileSync(join(pty, "src/unix/pty.cc"));
  if (!source.includes(PATCH_MARK)) {
    throw new Error(
      `${pty}/src/unix/pty.cc is not patched: run npm ci (scripts/patch_node_pty.cjs)`,
    );
  }
  const key = createHash("sha256").update(source).update(readFileSync(join(pty, "binding.gyp")))
    .update(dist.version).digest("hex").slice(0, 16);
  const out = join(buildCacheDir(), `pty-linux-arm64-${key}`, "pty.node");
  if (existsSync(out)) return { addon: out, origin: "cross-compiled (cached)" };
  for (const tool of ["aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++"]) {
    if (!onPath(tool)) {
      throw new Error(`${tool} is missing: apt-get install g++-aarch64-linux-gnu`);
    }
  }
  const work = join(buildCacheDir(), `.pty-arm64-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    for (const part of ["binding.gyp", "src", "package.json"]) {
      cpSync(join(pty, part), join(work, part), { recursive: true });
    }
    // binding.gyp asks `node -p "require('node-addon-api')"` for its headers.
    cpSync(nodeAddonApi(root), join(work, "node_modules/node-addon-api"), { recursive: true });
    const res = spawnSync("node", [
      nodeGyp(),
      "rebuild",
      "--arch=arm64",
      `--nodedir=${dist.dir}`,
    ], {
      cwd: work,
      encoding: "utf8",
      env: {
        ...process.env,
        CC: "aarch64-linux-gnu-gcc",
        CXX: "aarch64-linux-gnu-g++",
        LINK: "aarch64-linux-gnu-g++",
        AR: "aarch64-linux-gnu-ar",
      },
      timeout: 600_000,
      maxBuffer: 32 << 20,
    });
    const built = join(work, "build/Release/pty.node");
    if (res.status !== 0 || !existsSync(built)) {
      throw new Error(
        `cross-compiling node-pty for linux-arm64 failed:\n${res.stdout}${res.stderr}`,
      );
    }
    mkdirSync(dirname(out), { recursive: true });
    renameSync(built, out);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { addon: out, origin: "cross-compiled with aarch64-linux-gnu-g++ (patched)" };
}

/** node-addon-api as node-pty's install found it. */
function nodeAddonApi(root: string): string {
  for (const dir of ["node_modules/node-addon-api", "node_modules/node-pty/node-addon-api"]) {
    if (existsSync(join(root, dir, "package.json"))) return join(root, dir);
  }
  throw new Error("node-addon-api is missing: run npm ci");
}

/** npm's own node-gyp (npm ships it), which the cross-compile drives. */
function nodeGyp(): string {
  const res = spawnSync("sh", ["-c", "command -v npm"], { encoding: "utf8" });
  const npm = res.stdout.trim();
  if (!npm) throw new Error("npm is not on PATH (its node-gyp builds the addon)");
  const gyp = join(dirname(realpathSync(npm)), "../node_modules/node-gyp/bin/node-gyp.js");
  if (!existsSync(gyp)) throw new Error(`node-gyp not found at ${gyp}`);
  return gyp;
}
