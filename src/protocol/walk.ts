/**
 * `fs/walk`: a bounded, breadth-first listing of a directory tree in one
 * request. The Codex CLI 0.171 finds a project's skills with it; **[ext]**
 * v0 clients get it too (`capabilities.walk`). The two dialects share
 * the semantics (../fs/walk.ts) and differ in form: the Codex dialect wants
 * every option and answers `file://` URIs; v0 takes defaults and answers
 * paths as it was asked.
 *
 * @module
 */
import type { RequestType } from "./descriptors.ts";
import { invalidParams } from "./errors.ts";
import { show } from "./show.ts";

/** The bounds of a walk, and what it descends into. */
export interface WalkOptions {
  /**
   * How deep to read: 0 reads the directory itself, 1 also the directories
   * in it, and so on (default and maximum 64).
   */
  maxDepth?: number;
  /** The most directories read, the first included (default and maximum 10,000). */
  maxDirectories?: number;
  /** The most entries returned (default and maximum 50,000). */
  maxEntries?: number;
  /**
   * List a symlink to a directory as a directory and read it, once per
   * real directory (default false: symlinks are left out).
   */
  followDirectorySymlinks?: boolean;
  /** List directories whose name starts with `.` but do not read them (default false). */
  pruneHiddenDirectories?: boolean;
}

/** One entry a walk found. */
export interface WalkEntry {
  /** The walked path joined with the names below it (symlinks not resolved). */
  path: string;
  /** A regular file or a directory: nothing else is listed. */
  kind: "file" | "directory";
}

/** A directory a walk could not read; the walk went on without it. */
export interface WalkError {
  /** The directory. */
  path: string;
  /** Why, naming the path. */
  message: string;
  /** The POSIX error name, when known (not in the Codex dialect). */
  errno?: string;
}

/** What a walk returns. */
export interface WalkResult {
  /** Breadth first; within a directory by the bytes of the names. */
  entries: WalkEntry[];
  /** Directories that could not be read. */
  errors: WalkError[];
  /** Whether a limit left something out (the depth limit does not count). */
  truncated: boolean;
}

/** Params of `fs/walk`. */
export interface FsWalkParams {
  /** The directory, an absolute path or a `file://` URI. */
  path: string;
  /** The bounds (required in the Codex dialect, each member but `pruneHiddenDirectories`). */
  options?: WalkOptions;
  /** The sandbox to check the walk against, or null. */
  sandbox?: unknown;
}

/** The largest limits a walk accepts (upstream's maxima). */
export const WALK_MAXIMUMS: Readonly<{ depth: number; directories: number; entries: number }> =
  Object.freeze({ depth: 64, directories: 10_000, entries: 50_000 });

/** The `fs/walk` request. */
export const FsWalk: RequestType<FsWalkParams, WalkResult> = Object.freeze({
  method: "fs/walk",
  kind: "request" as const,
});

const LIMITS = ["maxDepth", "maxDirectories", "maxEntries"] as const;

/**
 * The `options` of an `fs/walk` request, checked for type (their bounds
 * are the walk's to check). With `strict` (the Codex dialect) the object
 * and every member but `pruneHiddenDirectories` are required, as upstream
 * requires them; otherwise each may be left out.
 *
 * @throws {RpcError} -32602 naming the bad or missing member
 *
 * @example
 * ```ts
 * import { checkWalkOptions } from "./walk.ts";
 * checkWalkOptions({ maxDepth: 2 }, false); // { maxDepth: 2 }
 * ```
 */
export function checkWalkOptions(value: unknown, strict: boolean): WalkOptions {
  if (value === undefined && !strict) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidParams(`options must be an object, got ${show(value)}`);
  }
  const o = value as Record<string, unknown>;
  const out: WalkOptions = {};
  for (const key of LIMITS) {
    const v = o[key];
    if (v === undefined && !strict) continue;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
      throw invalidParams(`options.${key} must be a non-negative integer, got ${show(v)}`);
    }
    out[key] = v;
  }
  for (const key of ["followDirectorySymlinks", "pruneHiddenDirectories"] as const) {
    const v = o[key];
    if (v === undefined && (!strict || key === "pruneHiddenDirectories")) continue;
    if (typeof v !== "boolean") {
      throw invalidParams(`options.${key} must be a boolean, got ${show(v)}`);
    }
    out[key] = v;
  }
  return out;
}
