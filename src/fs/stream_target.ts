/**
 * What `writeStream` does before and after the bytes, said once for the
 * local filesystem and the remote client alike: which targets it refuses,
 * how its temporary file is named, and how a failure on that file is
 * reported (naming the target, never the temporary file).
 *
 * @module
 */
import { osError, refused } from "./errno.ts";
import { checkedPath, tempName } from "./paths.ts";
import { FileSystemError } from "./types.ts";

/** The operation `writeStream` failures name, as `writeFile`'s do. */
export const WRITE_OP = "writeFile";

/** The operation `readStream` failures name, as `readFile`'s do. */
export const READ_OP = "readFile";

/**
 * The absolute path `path` names, refusing what `writeFile` refuses before
 * looking at the disk: a relative path (`EINVAL`) or a trailing slash
 * (`EISDIR`).
 *
 * @throws {FileSystemError} for a path that can never name a file
 *
 * @example
 * ```ts
 * import { writeStreamTarget } from "./stream_target.ts";
 * writeStreamTarget("file:///tmp/a%20b"); // "/tmp/a b"
 * ```
 */
export function writeStreamTarget(path: string): string {
  const target = checkedPath(WRITE_OP, path);
  if (target.endsWith("/")) throw osError(WRITE_OP, path, { code: "EISDIR" });
  return target;
}

/**
 * The temporary file a stream to `target` writes before the rename:
 * hidden, beside the target (so the rename stays within one filesystem),
 * ending in `.partial` so a leftover from a killed writer is recognisable.
 *
 * @example
 * ```ts
 * import { partialName } from "./stream_target.ts";
 * partialName("/srv/big.iso"); // e.g. "/srv/.big.iso.5d1c0e9a7b3f.partial"
 * ```
 */
export function partialName(target: string): string {
  return tempName(target, "partial");
}

/**
 * Refuse a target a stream must not replace: a directory (`EISDIR`) or
 * anything else that is not a regular file (`EINVAL`: a fifo, socket or
 * device would be replaced by a file rather than written to). `meta` is
 * what the path leads to (symlinks followed), undefined when missing.
 *
 * @throws {FileSystemError} for such a target
 *
 * @example
 * ```ts
 * import { refuseUnreplaceable } from "./stream_target.ts";
 * refuseUnreplaceable("/tmp/new", undefined); // fine: it will be created
 * ```
 */
export function refuseUnreplaceable(
  path: string,
  meta: { isDirectory: boolean; isFile: boolean } | undefined,
): void {
  if (!meta) return;
  if (meta.isDirectory) throw osError(WRITE_OP, path, { code: "EISDIR" });
  if (!meta.isFile) {
    throw refused(WRITE_OP, path, "EINVAL", "not a regular file, so a stream will not replace it");
  }
}

/**
 * A failure on the temporary file (or the rename) as a failure of the
 * stream to `path`: same kind and errno, a message built from the errno
 * that names `path`. Anything without an errno (a closed connection)
 * passes through unchanged.
 *
 * @example
 * ```ts
 * import { FileSystemError } from "./types.ts";
 * import { asTargetError } from "./stream_target.ts";
 * const err = new FileSystemError("io", "ENOSPC", "/tmp/.a.1.partial", "...");
 * (asTargetError(err, "/tmp/a") as Error).message; // "writeFile /tmp/a: no space left on device"
 * ```
 */
export function asTargetError(err: unknown, path: string): unknown {
  if (!(err instanceof FileSystemError) || err.errno === undefined) return err;
  if (err.path === path && err.message.startsWith(`${WRITE_OP} ${path}:`)) return err;
  const rebuilt = osError(WRITE_OP, path, { code: err.errno });
  return new FileSystemError(err.kind, err.errno, path, rebuilt.message);
}
