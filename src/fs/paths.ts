/**
 * Path strings of the local filesystem: checking a caller's path (by the
 * protocol's rule, so local and remote agree) into a
 * `FileSystemError`, and building paths without normalizing
 * them, since `..` after a symlinked directory means something else to the
 * kernel than to a lexical `join`.
 *
 * @module
 */
import { basename, dirname } from "node:path";
import { parsePath, type ParsePathOptions } from "../protocol/paths.ts";
import { refused } from "./errno.ts";

/**
 * The absolute path `path` names (a `file://` URI decoded), or throw an
 * `invalidInput` `FileSystemError` with errno `EINVAL`.
 *
 * @param op the operation, first word of the message
 * @param options `fileUris: false` reads `file:` values as relative paths
 * @throws {FileSystemError} when the path is relative, holds NUL or is a
 * bad URI
 *
 * @example
 * ```ts
 * import { checkedPath } from "./paths.ts";
 * checkedPath("readFile", "file:///tmp/a%20b"); // "/tmp/a b"
 * ```
 */
export function checkedPath(op: string, path: string, options?: ParsePathOptions): string {
  const parsed = parsePath(path, options);
  if (parsed.ok) return parsed.path;
  const detail = parsed.isUri
    ? `not a usable file URI: path ${parsed.reason}`
    : parsed.problem === "containsNul"
    ? "path must not contain NUL"
    : "path must be absolute";
  throw refused(op, path, "EINVAL", detail);
}

/**
 * `dir/name` without normalizing.
 *
 * @example
 * ```ts
 * import { child } from "./paths.ts";
 * child("/tmp/", "a"); // "/tmp/a"
 * ```
 */
export function child(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

/**
 * `path` without trailing slashes, except that `/` stays `/`.
 *
 * @example
 * ```ts
 * import { withoutTrailingSlashes } from "./paths.ts";
 * withoutTrailingSlashes("/tmp/a//"); // "/tmp/a"
 * ```
 */
export function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 1 && path[end - 1] === "/") end--;
  return path.slice(0, end);
}

/**
 * A fresh hidden name beside `target`, for a file or link to be renamed
 * over it.
 *
 * @param suffix the name's last part (`writeFile`'s temp files end in
 * `tmp`, `writeStream`'s in `partial`)
 *
 * @example
 * ```ts
 * import { tempName } from "./paths.ts";
 * tempName("/tmp/a.txt"); // e.g. "/tmp/.a.txt.3f9c0a1b2c3d.tmp"
 * tempName("/tmp/a.txt", "partial"); // e.g. "/tmp/.a.txt.3f9c0a1b2c3d.partial"
 * ```
 */
export function tempName(target: string, suffix = "tmp"): string {
  const random = new Uint8Array(6);
  crypto.getRandomValues(random);
  const hex = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
  // A short prefix of the name helps a human spot leftovers after a crash
  // without risking ENAMETOOLONG on a 255-byte name.
  const stem = Array.from(basename(target)).slice(0, 32).join("");
  return child(dirname(target), `.${stem}.${hex}.${suffix}`);
}

/**
 * Whether `candidate` is `root` or lies below it (both real paths).
 *
 * @example
 * ```ts
 * import { isSameOrInside } from "./paths.ts";
 * isSameOrInside("/a/b", "/a"); // true
 * isSameOrInside("/ab", "/a"); // false
 * ```
 */
export function isSameOrInside(candidate: string, root: string): boolean {
  if (candidate === root) return true;
  return candidate.startsWith(root.endsWith("/") ? root : `${root}/`);
}
