/**
 * `fs/watchMissing` as upstream 0.171 serves it: the client (the Codex CLI,
 * re-reading its project docs when an `AGENTS.md` or `.agents/skills`
 * appears) holds **one** watch per session, under ids that only grow.
 *
 * - An id not above every id seen before is ignored: `{watching: false}`,
 *   and the current watch stays.
 * - Otherwise the new watch replaces the current one, and it is only set
 *   up (`{watching: true}`) when `missing` is not empty, none of its paths
 *   exists yet (a dangling symlink exists), `present` (when given) exists,
 *   and no path goes through a symlink or a file: else `{watching: false}`
 *   and no watch at all.
 * - A watch fires once, `fs/missingChanged {watchId}`, when the first
 *   missing component of one of its paths appears (`a/b` for `a/b/c` when
 *   only `a` existed: upstream watches the nearest existing directory),
 *   when that directory goes, or when `present` goes. Nothing else fires
 *   it (a sibling, a change inside `present`).
 *
 * Polled: a watch is a handful of `lstat` calls every interval, works on
 * every filesystem and needs no inotify quota; an entry that appears and
 * goes again between two polls is missed (upstream's inotify sees it).
 *
 * @module
 */
import type { Stats } from "node:fs";
import { lstat } from "node:fs/promises";
import { lexicalPath } from "../fs/no_symlinks.ts";

/** Where a missing path is watched: its nearest existing directory and the entry below. */
interface WatchPoint {
  dir: string;
  child: string;
}

const lstatOrNull = (path: string): Promise<Stats | null> => lstat(path).catch(() => null);

/** Each component of `path` from the root down (`/a`, `/a/b`, ...). */
function prefixes(path: string): string[] {
  const parts = lexicalPath(path).split("/").filter((p) => p !== "");
  return parts.map((_, i) => "/" + parts.slice(0, i + 1).join("/"));
}

/**
 * The watch point of a missing path, or null when it cannot be watched:
 * it exists, or goes through a symlink or a file.
 */
async function watchPoint(path: string): Promise<WatchPoint | null> {
  let dir = "/";
  for (const prefix of prefixes(path)) {
    const st = await lstatOrNull(prefix);
    if (st === null) return { dir, child: prefix };
    if (!st.isDirectory()) return null;
    dir = prefix;
  }
  return null; // It exists.
}

/** Whether `path` exists and no component of it is a symlink (or a file above it). */
async function presentWithoutLinks(path: string): Promise<boolean> {
  const all = prefixes(path);
  for (const [i, prefix] of all.entries()) {
    const st = await lstatOrNull(prefix);
    if (st === null || st.isSymbolicLink()) return false;
    if (i < all.length - 1 && !st.isDirectory()) return false;
  }
  return true;
}

/** Whether a watch over `points` and `present` has seen its change. */
async function changed(points: WatchPoint[], present: string | null): Promise<boolean> {
  for (const { dir, child } of points) {
    if ((await lstatOrNull(child)) !== null) return true;
    if (!(await lstatOrNull(dir))?.isDirectory()) return true;
  }
  return present !== null && (await lstatOrNull(present)) === null;
}

/** The one watch of a session (see the module's description). */
export class MissingWatches {
  #highestId = -1;
  #timer: ReturnType<typeof setInterval> | undefined;
  #intervalMs: number;
  #notify: (watchId: number) => void;

  /**
   * @param notify called with the watch id when its change happened
   * @param intervalMs how often the paths are checked
   */
  constructor(notify: (watchId: number) => void, intervalMs = 250) {
    this.#notify = notify;
    this.#intervalMs = intervalMs;
  }

  /**
   * Watch `missing` (absolute paths) to appear and `present` to stay, under
   * `watchId` (a non-negative integer). Resolves whether it is watching.
   *
   * @example
   * ```ts
   * import { MissingWatches } from "./missing_watch.ts";
   * const watches = new MissingWatches((id) => console.log("changed", id));
   * await watches.watch(1, ["/tmp/no-such-dir/AGENTS.md"], null); // true
   * await watches.watch(1, ["/tmp/other"], null); // false: id 1 was seen
   * watches.close();
   * ```
   */
  async watch(watchId: number, missing: string[], present: string | null): Promise<boolean> {
    if (watchId <= this.#highestId) return false;
    this.#highestId = watchId;
    this.#stop();
    if (missing.length === 0) return false;
    const points: WatchPoint[] = [];
    for (const path of missing) {
      const point = await watchPoint(path);
      if (point === null) return false;
      points.push(point);
    }
    if (present !== null && !(await presentWithoutLinks(present))) return false;
    // A later watch came while this one was looked at: it won.
    if (this.#highestId !== watchId) return false;
    const presentPath = present === null ? null : lexicalPath(present);
    let checking = false;
    const timer = setInterval(async () => {
      if (checking) return;
      checking = true;
      try {
        if (await changed(points, presentPath) && this.#timer === timer) {
          this.#stop();
          this.#notify(watchId);
        }
      } finally {
        checking = false;
      }
    }, this.#intervalMs);
    this.#timer = timer;
    return true;
  }

  /** Stop the watch (the session ended). */
  close(): void {
    this.#stop();
  }

  #stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
