/**
 * How the local filesystem reports failures as {@linkcode FileSystemError}s.
 * Errors the operating system reports (or would report) keep their POSIX
 * name and are of kind `io`; requests refused by this module's own rules,
 * and any `EINVAL`, are of kind `invalidInput`. Messages are built from
 * the errno so they read the same under Deno and Node.
 *
 * @module
 */
import { errnoOf } from "../runtime/errno.ts";
import { FileSystemError } from "./types.ts";

/** The wording of the errors a message is built from (as `strerror` says them). */
const ERRNO_TEXT: Record<string, string> = {
  EACCES: "permission denied",
  EBUSY: "resource busy",
  EDQUOT: "disk quota exceeded",
  EEXIST: "file exists",
  EFBIG: "file too large",
  EINVAL: "invalid argument",
  EIO: "input/output error",
  EISDIR: "is a directory",
  ELOOP: "too many levels of symbolic links",
  EMFILE: "too many open files",
  ENAMETOOLONG: "file name too long",
  ENOENT: "no such file or directory",
  ENOSPC: "no space left on device",
  ENOTDIR: "not a directory",
  ENOTEMPTY: "directory not empty",
  ENXIO: "no such device or address",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ETXTBSY: "text file busy",
  EXDEV: "cross-device link",
};

/**
 * Wrap an OS error, keeping a {@linkcode FileSystemError} as it is. The
 * message is built from the errno rather than taken from the runtime,
 * because the runtime's text names internal paths (the temp file of
 * `writeFile`) and differs between Deno and Node.
 *
 * @param op the operation, first word of the message
 * @param path the path the error is about
 * @param err the thrown value, or `{ code }` for an error raised here
 * @param subject what the message names (default `path`)
 *
 * @example
 * ```ts
 * import { osError } from "./errno.ts";
 * osError("readFile", "/nope", { code: "ENOENT" }).message;
 * // "readFile /nope: no such file or directory"
 * ```
 */
export function osError(
  op: string,
  path: string,
  err: unknown,
  subject: string = path,
): FileSystemError {
  if (err instanceof FileSystemError) return err;
  const errno = errnoOf(err);
  const text = (errno && ERRNO_TEXT[errno]) ??
    (err instanceof Error ? err.message : String(err));
  const detail = errno && !ERRNO_TEXT[errno] ? `${errno}: ${text}` : text;
  return new FileSystemError(
    errno === "EINVAL" ? "invalidInput" : "io",
    errno,
    path,
    `${op} ${subject}: ${detail}`,
  );
}

/**
 * A request refused by the filesystem's own rules (kind `invalidInput`).
 *
 * @example
 * ```ts
 * import { refused } from "./errno.ts";
 * refused("readFile", "a", "EINVAL", "path must be absolute").message;
 * // "readFile a: path must be absolute"
 * ```
 */
export function refused(op: string, path: string, errno: string, detail: string): FileSystemError {
  return new FileSystemError("invalidInput", errno, path, `${op} ${path}: ${detail}`);
}

/**
 * Run `call`, turning what it throws into {@linkcode osError}`(op, path)`:
 * most steps of an operation fail this way, each naming its own path.
 *
 * @example
 * ```ts
 * import * as fsp from "node:fs/promises";
 * import { orOsError } from "./errno.ts";
 * const target = await orOsError("copy", "/tmp", () => fsp.realpath("/tmp"));
 * ```
 */
export async function orOsError<T>(op: string, path: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw osError(op, path, err);
  }
}
