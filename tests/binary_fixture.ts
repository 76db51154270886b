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
