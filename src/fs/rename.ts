/**
 * `rename` of the local filesystem: one `rename(2)`, made durable the way
 * `writeFile` is, and never a copy.
 *
 * @module
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { dirname } from "node:path";
import { syncDirectory } from "./atomic_write.ts";
import { osError } from "./errno.ts";
import { withoutTrailingSlashes } from "./paths.ts";

const op = "rename";

/**
 * Move `source` to `destination` (both absolute, already checked) with
 * `rename(2)`: atomic, replacing an existing destination file (or empty
 * directory, for a directory source). A symlink is moved as itself, and a
 * symlink at the destination is replaced, not followed. Across filesystems
 * it fails with `EXDEV`; nothing is copied.
 *
 * A regular file is flushed to disk before it is renamed, and the
 * destination's directory after, so that a crash leaves the old file or
 * the complete new one, as after `writeFile`. Both flushes are best
 * effort: a file the server may not open for reading is renamed all the
 * same.
 *
 * @throws {FileSystemError} naming both paths, with the errno of the
 * failure (`ENOENT`, `EXDEV`, `EISDIR`, `ENOTDIR`, `ENOTEMPTY`, `EACCES`,
 * ...); `EINVAL` (a directory into itself) is of kind `invalidInput`
 *
 * @example
 * ```ts
 * import { renamePath } from "./rename.ts";
 * await renamePath("/tmp/.report.partial", "/tmp/report");
 * ```
 */
export async function renamePath(source: string, destination: string): Promise<void> {
  const subject = `${source} to ${destination}`;
  await flushFile(source);
  try {
    await fsp.rename(source, destination);
  } catch (err) {
    throw osError(op, source, err, subject);
  }
  await syncDirectory(dirname(withoutTrailingSlashes(destination)));
}

/** fsync `path` when it is a regular file the server can open; else nothing. */
async function flushFile(path: string): Promise<void> {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY |
    constants.O_NOFOLLOW;
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(path, flags);
    if ((await handle.stat()).isFile()) await handle.sync();
  } catch {
    // Missing, a symlink, unreadable: the rename itself says what matters.
  } finally {
    await handle?.close().catch(() => {});
  }
}
