/**
 * The single-executable build (`dist/exec-server`) that the binary and ssh
 * bootstrap tests run, built on demand.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { ROOT } from "./harness.ts";

/** Where `scripts/build_binary.ts` puts the binary by default. */
export const DIST_BINARY: string = join(ROOT, "dist/exec-server");

// One build per test process, however many tests and files ask for it.
let building: Promise<void> | undefined;

/**
 * Build {@linkcode DIST_BINARY} unless the one there was made from the
 * current inputs (`--if-stale`: a quick digest check when it is fresh; a
 * minute or more when it must build).
 */
export function ensureBinary(): Promise<void> {
  building ??= new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["run", "--allow-all", join(ROOT, "scripts/build_binary.ts"), "--if-stale"],
      { cwd: ROOT, maxBuffer: 16 << 20 },
      (err, _stdout, stderr) =>
        err ? reject(new Error(`build_binary failed: ${err.message}\n${stderr}`)) : resolve(),
    );
  });
  return building;
}

/** A cross-built binary's path: `dist/exec-server-<target>`. */
export function targetBinary(target: string): string {
  return join(ROOT, `dist/exec-server-${target}`);
}

const targetBuilds = new Map<string, Promise<void>>();

/** Build `dist/exec-server-<target>` unless it is fresh (see {@linkcode ensureBinary}). */
export function ensureTargetBinary(target: string): Promise<void> {
  let build = targetBuilds.get(target);
  if (!build) {
    build = new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [
          "run",
          "--allow-all",
          join(ROOT, "scripts/build_binary.ts"),
          "--target",
          target,
          "--if-stale",
        ],
        { cwd: ROOT, maxBuffer: 16 << 20 },
        (err, _stdout, stderr) =>
          err
            ? reject(new Error(`build_binary --target ${target} failed: ${err.message}\n${stderr}`))
            : resolve(),
      );
    });
    targetBuilds.set(target, build);
  }
  return build;
}
