/**
 * `copy` of the local filesystem: symlinks are recreated as symlinks
 * (never followed), fifos, sockets and devices are refused before anything
 * is copied, a directory is never copied into itself (compared by real
 * path), and a tree is merged only into real directories, never through a
 * symlink, which could lead back into the source.
 *
 * @module
 */
import * as fsp from "node:fs/promises";
import { errnoOf } from "../runtime/errno.ts";
import { checkNotInside, type CopyStep, planTree } from "./copy_plan.ts";
import { orOsError, osError, refused } from "./errno.ts";
import { isSameOrInside, tempName } from "./paths.ts";
import { kindOf, statOrUndefined } from "./stat.ts";
import { type CopyOptions, FileSystemError } from "./types.ts";

/**
 * Copy a file, a symlink (as a symlink) or, with `options.recursive`, a directory
 * tree from `src` to `dst` (both already checked to be absolute). An
 * existing destination file is overwritten and an existing destination
 * directory is merged into; a symlink or file where a directory goes is
 * `EEXIST`. Failures are {@linkcode FileSystemError}s.
 *
 * @example
 * ```ts
 * import { copyPath } from "./copy.ts";
 * await copyPath("/etc/hostname", "/tmp/hostname", {});
 * ```
 */
export async function copyPath(src: string, dst: string, options: CopyOptions): Promise<void> {
  const st = await orOsError("copy", src, () => fsp.lstat(src));
  if (st.isDirectory()) {
    if (!options.recursive) {
      throw refused("copy", src, "EISDIR", "is a directory; pass recursive: true to copy it");
    }
    const realSrc = await checkNotInside(src, dst);
    await runPlan(await planTree(src, dst, st), realSrc);
    return;
  }
  if (st.isSymbolicLink()) {
    await copySymlink(src, dst);
    return;
  }
  if (!st.isFile()) {
    throw refused("copy", src, "EINVAL", `cannot copy ${kindOf(st)}`);
  }
  await copyRegularFile(src, dst);
}

async function runPlan(steps: CopyStep[], realSrc: string): Promise<void> {
  const created: { dst: string; mode: number }[] = [];
  for (const step of steps) {
    if (step.kind === "dir") {
      if (await makeDirectory(step.src, step.dst)) created.push(step);
      else await checkMergeTarget(step.src, step.dst, realSrc);
    } else if (step.kind === "symlink") {
      await copySymlink(step.src, step.dst);
    } else {
      await copyRegularFile(step.src, step.dst, realSrc);
    }
  }
  // Source modes are applied last, deepest first: a read-only source
  // directory must stay writable until its copy is filled.
  for (const dir of created.reverse()) {
    await orOsError("copy", dir.dst, () => fsp.chmod(dir.dst, dir.mode));
  }
}

/**
 * Create `dst` as a directory; false when a real directory already exists
 * there, to be merged into. Anything else in the way, a symlink to a
 * directory included, is `EEXIST` (as `cp` refuses to): merging through a
 * link would write wherever it points, the source itself included.
 */
async function makeDirectory(src: string, dst: string): Promise<boolean> {
  try {
    await fsp.mkdir(dst);
    return true;
  } catch (err) {
    if (errnoOf(err) !== "EEXIST") throw osError("copy", dst, err);
  }
  // lstat: only a link named with a trailing slash (`dst/`, at the top
  // level) is followed, as the kernel does; the real path is then checked
  // against the source like any merge target.
  const existing = await orOsError("copy", dst, () => fsp.lstat(dst));
  if (existing.isDirectory()) return false;
  const what = existing.isSymbolicLink()
    ? "a symlink"
    : existing.isFile()
    ? "a file"
    : kindOf(existing);
  throw new FileSystemError(
    "io",
    "EEXIST",
    dst,
    `copy ${src} -> ${dst}: file exists: ${dst} is ${what}, not a directory to merge into`,
  );
}

/**
 * Refuse to merge into a directory that is really inside the source. The
 * destination was checked before the copy started and every merged
 * directory is a real one, so this only catches a tree changed meanwhile.
 */
async function checkMergeTarget(src: string, dst: string, realSrc: string): Promise<void> {
  const real = await orOsError("copy", dst, () => fsp.realpath(dst));
  if (isSameOrInside(real, realSrc)) {
    throw refused(
      "copy",
      src,
      "EINVAL",
      `cannot copy a directory into itself: ${dst}, which resolves to ${real}, is inside ${realSrc}`,
    );
  }
}

/**
 * Copy one file's bytes and mode over `dst`, following a symlink there.
 * In a tree copy (`realSrc` given) a `dst` that resolves into the source
 * tree is refused: writing through it would change the source.
 */
async function copyRegularFile(src: string, dst: string, realSrc?: string): Promise<void> {
  try {
    const [from, to] = await Promise.all([fsp.stat(src), statOrUndefined(dst)]);
    if (to && to.dev === from.dev && to.ino === from.ino) {
      // Copying would truncate the source before reading it (a hard link,
      // or a destination symlink pointing back at the source).
      throw refused("copy", src, "EINVAL", `${dst} is the same file`);
    }
    if (to && realSrc !== undefined) {
      // Only an existing destination can lead elsewhere; its directory is
      // a real one outside the source, so only a symlink can lead back.
      const real = await fsp.realpath(dst);
      if (isSameOrInside(real, realSrc)) {
        throw refused(
          "copy",
          src,
          "EINVAL",
          `cannot write into the source: ${dst} resolves to ${real}, inside ${realSrc}`,
        );
      }
    }
    await fsp.copyFile(src, dst);
  } catch (err) {
    throw osError("copy", src, err, `${src} -> ${dst}`);
  }
}

/** Recreate the link at `dst` with the same target text, replacing a non-directory there. */
async function copySymlink(src: string, dst: string): Promise<void> {
  const target = await orOsError("copy", src, () => fsp.readlink(src));
  try {
    await fsp.symlink(target, dst);
    return;
  } catch (err) {
    if (errnoOf(err) !== "EEXIST") throw osError("copy", dst, err);
  }
  // Replace atomically: a new link under a temp name renamed over the old
  // entry (rename refuses to replace a directory).
  const temp = tempName(dst);
  await orOsError("copy", dst, () => fsp.symlink(target, temp));
  try {
    await fsp.rename(temp, dst);
  } catch (err) {
    await fsp.unlink(temp).catch(() => {});
    throw osError("copy", dst, err);
  }
}
