/**
 * The project layers of `environmentConfig/read`, as upstream 0.171 finds
 * them (read off the real binary): the project is the nearest directory
 * from `cwd` upwards that holds a `.git` (a file, or a directory with a
 * `HEAD`), else `cwd` itself; every directory from that root down to `cwd`
 * may add its `.codex/config.toml`, root first; a directory's layer counts
 * when the user's `[projects]` trusts that directory, or, when it has no
 * entry of its own, the project root.
 *
 * @module
 */
import { lstat, realpath, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";

/** A TOML table. */
type Table = Record<string, unknown>;

const isTable = (v: unknown): v is Table =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** Whether `dir` holds a `.git` that marks a repository's root. */
async function isRepositoryRoot(dir: string): Promise<boolean> {
  try {
    const git = await lstat(join(dir, ".git"));
    if (git.isFile()) return true;
    return git.isDirectory() && (await stat(join(dir, ".git", "HEAD"))).isFile();
  } catch {
    return false;
  }
}

/**
 * The directories whose `.codex` may add a layer, from the project root
 * down to `cwd` (absolute and normalized), and that root.
 *
 * @example
 * ```ts
 * import { projectDirs } from "./project_layers.ts";
 * const { root, dirs } = await projectDirs("/srv/app/src");
 * // root "/srv/app" when /srv/app/.git exists: dirs ["/srv/app", "/srv/app/src"]
 * ```
 */
export async function projectDirs(cwd: string): Promise<{ root: string; dirs: string[] }> {
  let root = cwd;
  for (let dir = cwd;; dir = dirname(dir)) {
    if (await isRepositoryRoot(dir)) {
      root = dir;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  const dirs = [root];
  const rest = relative(root, cwd);
  if (rest !== "") {
    let at = root;
    for (const part of rest.split(sep)) dirs.push(at = join(at, part));
  }
  return { root, dirs };
}

/** The `trust_level` `projects` gives `dir`, by its path or its real path. */
async function trustLevel(projects: Table, dir: string): Promise<string | undefined> {
  for (const key of [dir, await realpath(dir).catch(() => dir)]) {
    const entry = Object.hasOwn(projects, key) ? projects[key] : undefined;
    if (isTable(entry) && typeof entry.trust_level === "string") return entry.trust_level;
  }
  return undefined;
}

/**
 * The directories of `dirs` whose layer the user's configuration `user`
 * lets in: trusted themselves, or without an entry under a trusted `root`.
 */
export async function trustedDirs(
  user: Table | undefined,
  root: string,
  dirs: string[],
): Promise<string[]> {
  const projects = user?.projects;
  if (!isTable(projects)) return [];
  const rootLevel = await trustLevel(projects, root);
  const trusted: string[] = [];
  for (const dir of dirs) {
    if (((await trustLevel(projects, dir)) ?? rootLevel) === "trusted") trusted.push(dir);
  }
  return trusted;
}
