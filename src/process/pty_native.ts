/**
 * Loads node-pty's native addon on first use only, so that users of the
 * client never load a native module. The addon is driven directly (not
 * through node-pty's JavaScript wrapper) because the server must own the
 * master fd: it decides when output is drained, and it writes through the
 * fd's socket, which works under Deno where node-pty's own writes fail.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import process from "node:process";
import type { NativeCalls } from "../runtime/native_calls.ts";

/** What `pty.fork` returns. */
export interface NativePtyFork {
  /** The master side's fd (non-blocking). */
  fd: number;
  /** The child's pid; the child leads a new session. */
  pid: number;
  /** The slave side's path, e.g. `/dev/pts/3`. */
  pty: string;
}

/**
 * The part of node-pty's Unix addon that the server uses, with the calls
 * scripts/patch_node_pty.cjs adds for runtimes without FFI (NativeCalls:
 * `setPipeSize`, `writeBehind`).
 */
export interface NativePty extends NativeCalls {
  fork(
    file: string,
    args: string[],
    env: string[],
    cwd: string,
    cols: number,
    rows: number,
    uid: number,
    gid: number,
    utf8: boolean,
    helperPath: string,
    onExit: (code: number, signal: number) => void,
  ): NativePtyFork;
  resize(fd: number, cols: number, rows: number): void;
  /**
   * One non-blocking `write(2)` to `fd`: bytes written, or a negative errno.
   * Added by scripts/patch_node_pty.cjs; node-pty's prebuilt addons
   * (macOS) lack it.
   */
  write?(fd: number, bytes: Uint8Array): number;
  /**
   * macOS: node-pty's `spawn-helper`, which `fork` runs to start each
   * terminal (set by the loader, not the addon). Linux needs none.
   */
  helperPath?: string;
}

/** Thrown when node-pty's addon cannot be found or loaded. */
export class PtyUnavailableError extends Error {
  /** @param tried the paths that were tried, @param cause the last error */
  constructor(tried: string[], cause: unknown) {
    super(
      `node-pty's native addon could not be loaded (tried ${tried.join(", ")}): ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
    );
    this.name = "PtyUnavailableError";
  }
}

let cached: NativePty | undefined;

/**
 * The native addon. A single-executable build provides it through
 * `globalThis.__execServerPtyNative`; otherwise it is required from the
 * installed `node-pty` package.
 */
export function loadNativePty(): NativePty {
  if (cached) return cached;
  const provided = (globalThis as { __execServerPtyNative?: () => NativePty })
    .__execServerPtyNative;
  if (provided) {
    cached = provided();
    return cached;
  }
  const tried: string[] = [];
  let lastError: unknown;
  // From this module first (npm, a checkout); then from the working
  // directory, for a module loaded from a URL (JSR) with node-pty installed
  // in the project that runs it.
  const bases = [import.meta.url, pathToFileURL(join(process.cwd(), "/")).href];
  for (const base of bases) {
    if (!base.startsWith("file:")) continue;
    const require = createRequire(base);
    let root: string;
    try {
      root = dirname(require.resolve("node-pty/package.json"));
    } catch (err) {
      lastError = err;
      tried.push(`node-pty/package.json from ${base}`);
      continue;
    }
    for (
      const rel of [
        "build/Release/pty.node",
        `prebuilds/${process.platform}-${process.arch}/pty.node`,
      ]
    ) {
      const path = join(root, rel);
      tried.push(path);
      try {
        const native = require(path) as NativePty;
        const helper = join(dirname(path), "spawn-helper");
        if (process.platform === "darwin" && existsSync(helper)) native.helperPath = helper;
        cached = native;
        return cached;
      } catch (err) {
        lastError = err;
      }
    }
  }
  throw new PtyUnavailableError(tried, lastError);
}
