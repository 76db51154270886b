/**
 * `followSymlinks` in the Codex dialect, as upstream 0.171 serves it: an
 * optional boolean (default true; null reads as absent, anything else is
 * -32602) on `fs/readFile`, `fs/writeFile`, `fs/getMetadata`,
 * `fs/createDirectory` and `fs/remove`. Every other method ignores it, as
 * upstream does. With `false`, the path is normalized lexically and no
 * component of it may be a symlink (../fs/no_symlinks.ts):
 *
 * | method            | symlink ancestor | final symlink                          | other                                                    |
 * | ----------------- | ---------------- | -------------------------------------- | -------------------------------------------------------- |
 * | readFile          | -32603 ENOTDIR   | -32603 ELOOP                           | not a regular file: -32600 "path is not a regular file"  |
 * | writeFile         | -32603 ENOTDIR   | -32603 ELOOP                           | a directory: -32603 EISDIR; a fifo: -32603 ENXIO         |
 * | getMetadata       | -32603 ENOTDIR   | -32600 "path contains a symbolic link" |                                                          |
 * | createDirectory   | -32603 ENOTDIR   | recursive: ENOTDIR; else EEXIST        | recursive: an existing file on the way is ENOTDIR        |
 * | remove            | -32603 ENOTDIR   | -32600 "path contains a symbolic link" | `recursive` (default true): -32603 "recursive no-follow removal is unsupported" |
 *
 * A missing path is -32004 as always (nothing for `remove` with `force`).
 * These checks come before the sandbox gate, as upstream's failures come
 * from its no-follow `open`s before the sandbox is ever consulted.
 *
 * @module
 */
import { osError } from "../fs/errno.ts";
import {
  checkAncestors,
  checkDirectoryChain,
  checkNoSymlinks,
  lexicalPath,
} from "../fs/no_symlinks.ts";
import { FileSystemError } from "../fs/types.ts";
import { Requests } from "../protocol/descriptors.ts";
import { optionalBoolean, paramsObject, requireAbsolutePath } from "../protocol/validate.ts";

/** Upstream's refusal of `fs/remove` with `followSymlinks: false` and `recursive`. */
export const RECURSIVE_NO_FOLLOW = "recursive no-follow removal is unsupported";

/** Upstream's refusal to read something other than a regular file without following links. */
export const NOT_REGULAR = "path is not a regular file";

type Step = (path: string, p: Record<string, unknown>) => Promise<void>;

const STEPS: Record<string, Step> = {
  [Requests.fsReadFile.method]: async (path) => {
    const st = await checkNoSymlinks(path, false, { op: "readFile", finalSymlink: "loop" });
    if (st === null) throw osError("readFile", path, { code: "ENOENT" });
    if (!st?.isFile()) throw new FileSystemError("invalidInput", undefined, path, NOT_REGULAR);
  },
  [Requests.fsWriteFile.method]: async (path) => {
    const op = "writeFile";
    const st = await checkNoSymlinks(path, false, { op, finalSymlink: "loop" });
    if (st?.isDirectory()) throw osError(op, path, { code: "EISDIR" });
    // Upstream opens for writing with O_NONBLOCK: a fifo without a reader is ENXIO.
    if (st?.isFIFO()) throw osError(op, path, { code: "ENXIO" });
  },
  [Requests.fsGetMetadata.method]: async (path) => {
    const st = await checkNoSymlinks(path, false, { op: "getMetadata" });
    if (st === null) throw osError("getMetadata", path, { code: "ENOENT" });
  },
  [Requests.fsCreateDirectory.method]: async (path, p) => {
    const op = "createDirectory";
    if (optionalBoolean(p, "recursive", true)) await checkDirectoryChain(path, op);
    else await checkAncestors(path, op);
  },
  [Requests.fsRemove.method]: async (path, p) => {
    const op = "remove";
    if (optionalBoolean(p, "recursive", true)) {
      throw new FileSystemError("io", undefined, path, RECURSIVE_NO_FOLLOW);
    }
    const force = optionalBoolean(p, "force", true);
    if ((await checkAncestors(path, op, "report")) === "missing") {
      if (force) return;
      throw osError(op, path, { code: "ENOENT" });
    }
    const st = await checkNoSymlinks(path, false, { op });
    if (st === null && !force) throw osError(op, path, { code: "ENOENT" });
  },
};

/** Whether `method` takes `followSymlinks` (upstream 0.171 types it on these only). */
export function takesFollowSymlinks(method: string): boolean {
  return method in STEPS;
}

/**
 * The no-follow step of a Codex `fs/*` request: `params` as they are when
 * links are followed (or the method ignores `followSymlinks`); else the
 * checks above, and `params` with `path` normalized lexically, so that the
 * operation does not resolve a `..` through a link either.
 *
 * @throws {RpcError} -32602 for a `followSymlinks` that is not a boolean
 * @throws {FileSystemError} for what the table above refuses
 */
export async function noFollowStep(method: string, params: unknown): Promise<unknown> {
  const step = STEPS[method];
  if (!step) return params;
  const p = paramsObject(params, method);
  if (optionalBoolean(p, "followSymlinks", true)) return params;
  const path = lexicalPath(requireAbsolutePath(p, "path"));
  await step(path, p);
  return { ...p, path };
}
