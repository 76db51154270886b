/**
 * `writeFile` of the local filesystem: the bytes go to a temp file in the
 * target's directory, are fsynced and renamed over the target, so a
 * failure never leaves a half-written file. The old file's mode (and, when
 * permitted, owner) is kept, and writing through a symlink replaces the
 * file the link points to.
 *
 * @module
 */
import { constants, type Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import { dirname, isAbsolute } from "node:path";
import { writeAll } from "../runtime/file_write.ts";
import { orOsError, osError, refused } from "./errno.ts";
import { tempName } from "./paths.ts";
import { kindOf, statOrUndefined } from "./stat.ts";

/** Symlinks followed before `writeFile` gives up with `ELOOP` (Linux's own limit). */
const MAX_SYMLINK_HOPS = 40;

const op = "writeFile";

/**
 * A temporary file beside the file a path names, that will replace it
 * with the old file's mode and owner: `writeFile` writes it at once, a
 * `replace` file handle block by block.
 */
export interface Replacement {
  /** The file replaced: the path with a final symlink followed. */
  target: string;
  /** The temporary file, beside the target. */
  temp: string;
  /** The target as it was, undefined when it did not exist. */
  existing: Stats | undefined;
  /** The temporary file, open for writing. */
  file: fsp.FileHandle;
}

/**
 * Open a {@linkcode Replacement} for `path` (already checked to be
 * absolute), its temporary file named with `suffix`. Refuses directories
 * (`EISDIR`) and existing non-regular files (`EINVAL`); failures are
 * `FileSystemError`s of operation `op`.
 */
export async function openReplacement(
  op: string,
  path: string,
  suffix?: string,
): Promise<Replacement> {
  if (path.endsWith("/")) throw osError(op, path, { code: "EISDIR" });
  const target = await orOsError(op, path, () => resolveFinalSymlinks(path));
  const existing = await orOsError(op, path, () => statOrUndefined(target));
  if (existing?.isDirectory()) throw osError(op, path, { code: "EISDIR" });
  if (existing && !existing.isFile()) {
    throw refused(op, path, "EINVAL", `${kindOf(existing)} cannot be replaced by a file`);
  }
  const temp = tempName(target, suffix);
  // A replacement starts private so the new bytes are never visible under
  // looser permissions than the old file had; a new file gets the usual
  // 0666 minus umask.
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  const file = await orOsError(op, path, () => fsp.open(temp, flags, existing ? 0o600 : 0o666));
  return { target, temp, existing, file };
}

/**
 * The temporary file takes the target's place: the old mode and owner,
 * fsync, rename, fsync of the directory. On failure it is removed and the
 * error, of operation `op` at `path`, thrown.
 */
export async function commitReplacement(r: Replacement, op: string, path: string): Promise<void> {
  try {
    if (r.existing) {
      // Owner first: chown clears set-id bits that chmod then restores.
      await r.file.chown(r.existing.uid, r.existing.gid).catch(() => {});
      await r.file.chmod(r.existing.mode & 0o7777);
    }
    await r.file.sync();
    await r.file.close();
    await fsp.rename(r.temp, r.target);
  } catch (err) {
    await abandonReplacement(r);
    throw osError(op, path, err);
  }
  await syncDirectory(dirname(r.target));
}

/** Close and remove the temporary file: the target stays as it was. */
export async function abandonReplacement(r: Replacement): Promise<void> {
  await r.file.close().catch(() => {});
  await fsp.unlink(r.temp).catch(() => {});
}

/**
 * Create or replace the file at `path` (already checked to be absolute)
 * atomically. Refuses directories (`EISDIR`) and existing non-regular files
 * (`EINVAL`); failures are `FileSystemError`s.
 *
 * @example
 * ```ts
 * import { atomicWrite } from "./atomic_write.ts";
 * await atomicWrite("/tmp/hello.txt", new TextEncoder().encode("hi"));
 * ```
 */
export async function atomicWrite(path: string, data: Uint8Array): Promise<void> {
  const r = await openReplacement(op, path);
  try {
    await writeAll(r.file, data, null);
  } catch (err) {
    await abandonReplacement(r);
    throw osError(op, path, err);
  }
  await commitReplacement(r, op, path);
}

/**
 * fsync directory `dir`, which makes a rename in it durable. Some
 * filesystems refuse fsync on a directory, and the rename has already
 * happened, so failures are ignored.
 */
export async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await fsp.open(dir, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort
  }
}

/**
 * Follow symlinks in the last component of `path`, so that writing through
 * a link replaces the file it points to rather than the link itself. A
 * dangling link yields the path it points to (the file gets created there).
 * `fs/open` in `replace` mode resolves its target the same way.
 */
export async function resolveFinalSymlinks(path: string): Promise<string> {
  let current = path;
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    let st: Stats;
    try {
      st = await fsp.lstat(current);
    } catch {
      // Missing (or unreachable): the open of the temp file reports why.
      return current;
    }
    if (!st.isSymbolicLink()) return current;
    const target = await fsp.readlink(current);
    current = isAbsolute(target) ? target : `${dirname(current)}/${target}`;
  }
  throw osError(op, path, { code: "ELOOP" });
}
