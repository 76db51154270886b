/**
 * Planning a directory copy before anything is written: the source tree is
 * walked first, so an unsupported entry (fifo, socket, device) is refused
 * before a partial copy exists, and a destination inside the source, which
 * is refused by real path, could never make the walk see its own output.
 *
 * @module
 */
import type { Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { errnoOf } from "../runtime/errno.ts";
import { orOsError, refused } from "./errno.ts";
import { child, isSameOrInside } from "./paths.ts";
import { kindOf } from "./stat.ts";

/** One step of a planned directory copy, in the order it is to be done. */
export type CopyStep =
  | {
    /** Create (or merge into) the directory `dst`, later given `mode`. */
    kind: "dir";
    /** The source directory. */
    src: string;
    /** The destination directory. */
    dst: string;
    /** The source's permission bits. */
    mode: number;
  }
  | {
    /** Copy a regular file's bytes, or recreate a symlink. */
    kind: "file" | "symlink";
    /** The source entry. */
    src: string;
    /** The destination entry. */
    dst: string;
  };

/**
 * The steps copying the directory `src` (whose `lstat` is `st`) to `dst`
 * takes, parents before children and names sorted; an entry that cannot be
 * copied is refused with `EINVAL` before any step is taken.
 *
 * @example
 * ```ts
 * import { lstatSync } from "node:fs";
 * import { planTree } from "./copy_plan.ts";
 * const steps = await planTree("/etc/ssl", "/tmp/ssl", lstatSync("/etc/ssl"));
 * steps[0]; // { kind: "dir", src: "/etc/ssl", dst: "/tmp/ssl", mode: 0o755 }
 * ```
 */
export async function planTree(src: string, dst: string, st: Stats): Promise<CopyStep[]> {
  const steps: CopyStep[] = [];
  await planInto(src, dst, st, steps);
  return steps;
}

async function planInto(src: string, dst: string, st: Stats, steps: CopyStep[]): Promise<void> {
  steps.push({ kind: "dir", src, dst, mode: st.mode & 0o7777 });
  const names = await orOsError("copy", src, async () => (await fsp.readdir(src)).sort());
  for (const name of names) {
    const from = child(src, name);
    const to = child(dst, name);
    const entry = await orOsError("copy", from, () => fsp.lstat(from));
    if (entry.isDirectory()) await planInto(from, to, entry, steps);
    else if (entry.isSymbolicLink()) steps.push({ kind: "symlink", src: from, dst: to });
    else if (entry.isFile()) steps.push({ kind: "file", src: from, dst: to });
    else throw refused("copy", from, "EINVAL", `cannot copy ${kindOf(entry)}`);
  }
}

/**
 * Refuse to copy the directory `src` to a `dst` inside it (compared by
 * real path, `dst` need not exist yet); returns the source's real path.
 *
 * @example
 * ```ts
 * import { checkNotInside } from "./copy_plan.ts";
 * await checkNotInside("/etc/ssl", "/tmp/ssl"); // "/etc/ssl"
 * ```
 */
export async function checkNotInside(src: string, dst: string): Promise<string> {
  const realSrc = await orOsError("copy", src, () => fsp.realpath(src));
  const realDst = await orOsError("copy", dst, () => resolveExisting(dst));
  if (isSameOrInside(realDst, realSrc)) {
    const where = realDst === dst ? dst : `${dst}, which resolves to ${realDst},`;
    throw refused(
      "copy",
      src,
      "EINVAL",
      `cannot copy a directory into itself: ${where} is inside ${realSrc}`,
    );
  }
  return realSrc;
}

/**
 * The real path of `path`, where only a prefix has to exist: the missing
 * rest is appended. Used to see where a copy would land.
 */
async function resolveExisting(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = await fsp.realpath(current);
      return missing.length === 0 ? real : resolve(real, ...missing);
    } catch (err) {
      if (errnoOf(err) !== "ENOENT" || current === "/") throw err;
      missing.unshift(basename(current));
      current = dirname(current);
    }
  }
}
