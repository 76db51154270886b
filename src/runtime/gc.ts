/**
 * A full garbage collection on request. V8 sizes its heap for the busiest
 * moment and, under Deno, keeps that size while the process sits idle, so
 * a server that has just run thousands of short commands would hold on to
 * memory it no longer uses. Both runtimes accept `--expose-gc` at run time
 * for contexts created afterwards, which is how the collector is reached
 * without a command-line flag.
 *
 * @module
 */
import { createRequire } from "node:module";

let collect: (() => void) | null | undefined;

/**
 * Run a full garbage collection, returning memory to the system where the
 * runtime does so. Returns false where the runtime offers no collector.
 *
 * @example
 * ```ts
 * import { collectGarbage } from "./gc.ts";
 * collectGarbage();
 * ```
 */
export function collectGarbage(): boolean {
  if (collect === undefined) {
    try {
      // Loaded on first use: node:v8 and node:vm cost a server's start time.
      const require = createRequire(import.meta.url);
      const { setFlagsFromString } = require("node:v8") as typeof import("node:v8");
      const { runInNewContext } = require("node:vm") as typeof import("node:vm");
      setFlagsFromString("--expose-gc");
      // Only the new context sees the flag: nothing else gains a global.
      const fn: unknown = runInNewContext("gc");
      collect = typeof fn === "function" ? fn as () => void : null;
    } catch {
      collect = null;
    }
  }
  if (!collect) return false;
  collect();
  return true;
}
