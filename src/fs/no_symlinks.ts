/**
 * Paths walked without following symlinks, as the Codex dialect's
 * `followSymlinks: false` asks (upstream 0.171 opens every component with
 * `O_NOFOLLOW`). The path is normalized lexically first (`a/link/..` is
 * `a`, never what the link's parent is), then every component is looked
 * at with `lstat`:
 *
 * - an ancestor that is a symlink or not a directory: `ENOTDIR`;
 * - a missing ancestor: `ENOENT`;
 * - the final component: a symlink is refused (how, the caller says), else
 *   its `Stats` (or null when it does not exist) are the answer.
 *
 * The check runs before the operation, so a component swapped for a
 * symlink in between is not seen: this keeps honest clients from following
 * links, it is no defence against a concurrent attacker on the same host.
 *
 * @module
 */
import type { Stats } from "node:fs";
import { lstat } from "node:fs/promises";
import { posix } from "node:path";
import { osError } from "./errno.ts";
import { FileSystemError } from "./types.ts";

/** What to do with a final component that is a symlink. */
export type FinalSymlink =
  /** -32600 "path contains a symbolic link" (getMetadata, remove: upstream's check). */
  | "refuse"
  /** `ELOOP`, -32603 (readFile, writeFile: upstream's `open(O_NOFOLLOW)` fails so). */
  | "loop"
  /** `ENOTDIR`, -32603 (a recursive createDirectory: every component must be a directory). */
  | "notDirectory";

/** Options of {@linkcode checkNoSymlinks}. */
export interface NoSymlinkOptions {
  /** The operation, first word of an error message (default `"open"`). */
  op?: string;
  /** How a final symlink fails (default `"refuse"`). */
  finalSymlink?: FinalSymlink;
}

/** Upstream's message when a no-follow call meets a final symlink. */
export const SYMLINK_REFUSED = "path contains a symbolic link";

/**
 * `path` normalized lexically, without trailing slashes (`/` stays `/`).
 *
 * @example
 * ```ts
 * import { lexicalPath } from "./no_symlinks.ts";
 * lexicalPath("/a/link/../b/"); // "/a/b"
 * ```
 */
export function lexicalPath(path: string): string {
  const normal = posix.normalize(path);
  return normal.length > 1 && normal.endsWith("/") ? normal.replace(/\/+$/, "") : normal;
}

/** The `lstat` of `path`, or null when nothing is there (other failures throw). */
async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOENT") return null;
    throw err;
  }
}

/** Each proper ancestor of `normal` below `/`, outermost first. */
function ancestors(normal: string): string[] {
  const parts = normal.split("/").filter((p) => p !== "");
  return parts.slice(0, -1).map((_, i) => "/" + parts.slice(0, i + 1).join("/"));
}

/**
 * Check the ancestors of `path` (lexically normalized, absolute): each must
 * be a real directory. Returns `"missing"` at the first one that does not
 * exist, when `missing` is `"report"`; else that is `ENOENT`.
 *
 * @throws {FileSystemError} `ENOTDIR` for a symlink or non-directory ancestor
 */
export async function checkAncestors(
  path: string,
  op = "open",
  missing: "report" | "throw" = "throw",
): Promise<"ok" | "missing"> {
  for (const dir of ancestors(lexicalPath(path))) {
    const st = await lstatOrNull(dir).catch((err) => {
      throw osError(op, path, err);
    });
    if (st === null) {
      if (missing === "report") return "missing";
      throw osError(op, path, { code: "ENOENT" });
    }
    if (!st.isDirectory()) throw osError(op, path, { code: "ENOTDIR" });
  }
  return "ok";
}

/**
 * With `follow` true, nothing (undefined: the caller follows links as
 * usual). With `follow` false, the no-follow check of this module: returns
 * the final component's `lstat` (never a symlink), or null when it does not
 * exist.
 *
 * @throws {FileSystemError} `ENOTDIR` or `ENOENT` for an ancestor; for a final symlink,
 *   per `options.finalSymlink`
 *
 * @example
 * ```ts
 * import { checkNoSymlinks } from "./no_symlinks.ts";
 * await checkNoSymlinks("/etc/hostname", false); // Stats of the file
 * await checkNoSymlinks("/bin/sh", false); // throws ENOTDIR where /bin is a symlink
 * await checkNoSymlinks("/bin/sh", true); // undefined: not checked
 * ```
 */
export async function checkNoSymlinks(
  path: string,
  follow: boolean,
  options: NoSymlinkOptions = {},
): Promise<Stats | null | undefined> {
  if (follow) return undefined;
  const op = options.op ?? "open";
  const normal = lexicalPath(path);
  await checkAncestors(normal, op);
  if (normal === "/") return await lstat("/");
  const st = await lstatOrNull(normal).catch((err) => {
    throw osError(op, path, err);
  });
  if (st === null || !st.isSymbolicLink()) return st;
  switch (options.finalSymlink ?? "refuse") {
    case "loop":
      throw osError(op, path, { code: "ELOOP" });
    case "notDirectory":
      throw osError(op, path, { code: "ENOTDIR" });
    case "refuse":
      throw new FileSystemError("invalidInput", "ELOOP", path, SYMLINK_REFUSED);
  }
}

/**
 * For a recursive creation without following symlinks: every component of
 * `path` that exists must be a real directory (a symlink or a file is
 * `ENOTDIR`); the first missing one and all below it are to be created.
 *
 * @throws {FileSystemError} `ENOTDIR`
 */
export async function checkDirectoryChain(path: string, op = "createDirectory"): Promise<void> {
  if ((await checkAncestors(path, op, "report")) === "missing") return;
  const st = await checkNoSymlinks(path, false, { op, finalSymlink: "notDirectory" });
  if (st && !st.isDirectory()) throw osError(op, path, { code: "ENOTDIR" });
}
