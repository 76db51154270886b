/**
 * `walk` of the local filesystem: a bounded, breadth-first listing of a
 * directory tree, with the semantics of the upstream server's `fs/walk`
 * (read off the real binary, 0.171): entries of each directory sorted by
 * the bytes of their names; only regular files and directories listed
 * (other types, and symlinks unless followed to a directory, are left
 * out); a directory reached twice (through a symlink, by its real path)
 * listed but read once; a directory that cannot be read reported in
 * `errors` while the walk goes on.
 *
 * @module
 */
import type { Dirent, Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import { Buffer } from "node:buffer";
import { errnoOf } from "../runtime/errno.ts";
import { osError, refused } from "./errno.ts";
import { child } from "./paths.ts";
import {
  WALK_MAXIMUMS,
  type WalkEntry,
  type WalkError,
  type WalkOptions,
  type WalkResult,
} from "../protocol/walk.ts";

/** A walk's options with every default filled in. */
export type WalkPlan = Required<WalkOptions>;

/**
 * `options` checked and completed: each limit defaults to its maximum,
 * symlinks are not followed and hidden directories are read.
 *
 * @throws {FileSystemError} `EINVAL` for a limit that is not an integer, is
 * zero (directories, entries) or is over its maximum
 *
 * @example
 * ```ts
 * import { walkPlan } from "./walk.ts";
 * walkPlan("walk", "/srv", { maxDepth: 2 }).maxEntries; // 50000
 * ```
 */
export function walkPlan(op: string, path: string, options: WalkOptions = {}): WalkPlan {
  const plan: WalkPlan = {
    maxDepth: options.maxDepth ?? WALK_MAXIMUMS.depth,
    maxDirectories: options.maxDirectories ?? WALK_MAXIMUMS.directories,
    maxEntries: options.maxEntries ?? WALK_MAXIMUMS.entries,
    followDirectorySymlinks: options.followDirectorySymlinks ?? false,
    pruneHiddenDirectories: options.pruneHiddenDirectories ?? false,
  };
  for (const key of ["maxDepth", "maxDirectories", "maxEntries"] as const) {
    const value = plan[key];
    if (!Number.isSafeInteger(value) || value < 0) {
      throw refused(op, path, "EINVAL", `${key} must be a non-negative integer, got ${value}`);
    }
  }
  if (plan.maxDirectories === 0 || plan.maxEntries === 0) {
    throw refused(op, path, "EINVAL", "filesystem walk limits must be greater than zero");
  }
  if (
    plan.maxDepth > WALK_MAXIMUMS.depth || plan.maxDirectories > WALK_MAXIMUMS.directories ||
    plan.maxEntries > WALK_MAXIMUMS.entries
  ) {
    const { depth, directories, entries } = WALK_MAXIMUMS;
    throw refused(
      op,
      path,
      "EINVAL",
      `filesystem walk limits exceed maximums: depth=${depth}, directories=${directories}, entries=${entries}`,
    );
  }
  return plan;
}

/** Everything below a directory may still be read, or a gate says where not. */
export type ReadGate = (realPath: string) => boolean;

/** Name order of the upstream walk: by the UTF-8 bytes, as Rust compares `OsString`s. */
function byNameBytes(a: Dirent, b: Dirent): number {
  return Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
}

/** The directory's identity: the same directory reached twice has one. */
const identity = (st: Stats): string => `${st.dev}:${st.ino}`;

interface Pending {
  path: string;
  depth: number;
}

/** What the walk lists an entry as; a directory carries its stat when it has one. */
type Listed = { kind: "file" } | { kind: "directory"; st: Stats | undefined };

/**
 * What a directory entry is to the walk: a file, a directory, or nothing
 * to list.
 */
async function classify(path: string, d: Dirent, follow: boolean): Promise<Listed | undefined> {
  if (d.isFile()) return { kind: "file" };
  // Gone since the listing: still listed (as the listing saw it); reading
  // it then reports why not.
  if (d.isDirectory()) {
    return {
      kind: "directory",
      st: await fsp.lstat(path).catch(() => undefined),
    };
  }
  const known = d.isFIFO() || d.isSocket() || d.isCharacterDevice() || d.isBlockDevice();
  if (known || (d.isSymbolicLink() && !follow)) return undefined;
  // A followed symlink (a dangling one or a loop is left out), or a
  // filesystem that reports no entry types.
  const st = await (d.isSymbolicLink() ? fsp.stat(path) : fsp.lstat(path)).catch(() => undefined);
  if (st?.isDirectory()) return { kind: "directory", st };
  if (st?.isFile() && !d.isSymbolicLink()) return { kind: "file" };
  return undefined;
}

/** The walk's state, shared by the steps of one walk. */
class Walker {
  readonly entries: WalkEntry[] = [];
  readonly errors: WalkError[] = [];
  truncated = false;
  #plan: WalkPlan;
  #gate: ReadGate | undefined;
  #seen = new Set<string>();
  #queue: Pending[] = [];

  constructor(plan: WalkPlan, gate: ReadGate | undefined) {
    this.#plan = plan;
    this.#gate = gate;
  }

  async run(root: string, rootStat: Stats): Promise<void> {
    this.#seen.add(identity(rootStat));
    this.#queue.push({ path: root, depth: 0 });
    let read = 0;
    for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
      if (read === this.#plan.maxDirectories) {
        this.truncated = true;
        return;
      }
      read++;
      if (!await this.#read(next)) return;
    }
  }

  /** List one directory; false once the entry limit stops the walk. */
  async #read({ path, depth }: Pending): Promise<boolean> {
    let dirents: Dirent[];
    try {
      if (this.#gate && !this.#gate(await fsp.realpath(path))) {
        throw Object.assign(new Error("sandbox denies reading it"), { code: "EACCES" });
      }
      dirents = await fsp.readdir(path, { withFileTypes: true });
    } catch (err) {
      this.errors.push({ path, message: osError("walk", path, err).message, errno: errnoOf(err) });
      return true;
    }
    dirents.sort(byNameBytes);
    const kinds = await Promise.all(
      dirents.map((d) => classify(child(path, d.name), d, this.#plan.followDirectorySymlinks)),
    );
    for (let i = 0; i < dirents.length; i++) {
      const kind = kinds[i];
      if (!kind) continue;
      if (this.entries.length === this.#plan.maxEntries) {
        this.truncated = true;
        return false;
      }
      const entryPath = child(path, dirents[i].name);
      this.entries.push({ path: entryPath, kind: kind.kind });
      if (kind.kind !== "directory" || depth + 1 > this.#plan.maxDepth) continue;
      if (this.#plan.pruneHiddenDirectories && dirents[i].name.startsWith(".")) continue;
      if (kind.st) {
        const id = identity(kind.st);
        if (this.#seen.has(id)) continue;
        this.#seen.add(id);
      }
      this.#queue.push({ path: entryPath, depth: depth + 1 });
    }
    return true;
  }
}

/**
 * Walk the tree at `root` (an absolute path, already checked) under
 * `plan`. A root that is a file, or a symlink not followed, has no
 * entries; a missing root (or one whose symlink dangles) fails. Entry
 * paths are `root` joined with the names below it, never resolved.
 *
 * @param gate when given, a directory whose real path it refuses is not
 * read but reported in `errors` (`EACCES`)
 * @throws {FileSystemError} when the root cannot be looked at
 *
 * @example
 * ```ts
 * import { walkPlan, walkTree } from "./walk.ts";
 * const { entries } = await walkTree("/etc", walkPlan("walk", "/etc", { maxDepth: 0 }));
 * console.log(entries[0]); // e.g. { path: "/etc/adduser.conf", kind: "file" }
 * ```
 */
export async function walkTree(root: string, plan: WalkPlan, gate?: ReadGate): Promise<WalkResult> {
  const op = "walk";
  let st: Stats;
  try {
    st = await fsp.lstat(root);
    if (st.isSymbolicLink() && plan.followDirectorySymlinks) st = await fsp.stat(root);
  } catch (err) {
    throw osError(op, root, err);
  }
  const walker = new Walker(plan, gate);
  if (st.isDirectory()) await walker.run(root, st);
  return { entries: walker.entries, errors: walker.errors, truncated: walker.truncated };
}
