/**
 * Reading `stat` results the way the local filesystem reports them: what
 * kind of file an entry is (for messages), its metadata with unknown times
 * as 0, and a `stat` where a missing path is an answer, not a failure.
 *
 * @module
 */
import type { Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import { errnoOf } from "../runtime/errno.ts";
import type { FileMetadata } from "./types.ts";

/**
 * A non-regular, non-directory file type with its article, for messages
 * such as `cannot copy a fifo`.
 *
 * @example
 * ```ts
 * import { statSync } from "node:fs";
 * import { kindOf } from "./stat.ts";
 * kindOf(statSync("/dev/null")); // "a character device"
 * ```
 */
export function kindOf(st: Stats): string {
  if (st.isFIFO()) return "a fifo";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSymbolicLink()) return "a symlink";
  return "an unsupported file type";
}

function epochMs(ms: number | null | undefined): number {
  // Some filesystems and runtimes report no birth time (0, NaN or null).
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? Math.floor(ms) : 0;
}

/**
 * The `getMetadata` answer for a `stat` result; times the system does not
 * know are 0.
 *
 * @example
 * ```ts
 * import { statSync } from "node:fs";
 * import { metadataOf } from "./stat.ts";
 * metadataOf(statSync("/tmp")).isDirectory; // true
 * ```
 */
export function metadataOf(st: Stats): FileMetadata {
  return {
    isDirectory: st.isDirectory(),
    isFile: st.isFile(),
    createdAtMs: epochMs(st.birthtimeMs),
    modifiedAtMs: epochMs(st.mtimeMs),
  };
}

/**
 * `stat` (symlinks followed), undefined when nothing is there; other
 * failures are thrown as they are.
 *
 * @example
 * ```ts
 * import { statOrUndefined } from "./stat.ts";
 * await statOrUndefined("/no/such/file"); // undefined
 * ```
 */
export async function statOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await fsp.stat(path);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw err;
  }
}
