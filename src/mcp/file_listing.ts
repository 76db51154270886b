/**
 * `list_directory` and `search_files`: listings read in one bounded
 * request (`readDirectory`, or the server-side `walk`), shown as paths
 * relative to the directory asked for, directories ending in `/`.
 *
 * @module
 */
import type { FileToolContext } from "./file_tools.ts";
import { anyGlob, globMatcher } from "../util/glob.ts";
import {
  type Args,
  optionalInt,
  optionalStrings,
  requiredString,
  ToolInputError,
} from "./tool_args.ts";
import { textResult, type ToolResult } from "./tool_result.ts";

/** The most entries a listing shows. */
export const MAX_LISTED = 2_000;
/** The most matches a search shows. */
export const MAX_MATCHES = 1_000;
/** The deepest `list_directory` goes. */
const MAX_DEPTH = 16;

/** `path` below `dir`, without the leading `dir/`. */
function relative(dir: string, path: string): string {
  const base = dir.endsWith("/") ? dir : `${dir}/`;
  return path.startsWith(base) ? path.slice(base.length) : path;
}

/** `list_directory`. */
export async function listDirectoryTool(ctx: FileToolContext, args: Args): Promise<ToolResult> {
  const path = ctx.paths.resolve(args, "path");
  const depth = optionalInt(args, "depth", 1, MAX_DEPTH) ?? 1;
  let names: string[];
  let truncated = false;
  if (depth === 1) {
    const entries = await ctx.fs.readDirectory(path);
    names = entries.map((e) => e.fileName + (e.isDirectory ? "/" : e.isFile ? "" : " (other)"))
      .sort();
  } else {
    const walk = await ctx.fs.walk(path, { maxDepth: depth - 1, maxEntries: MAX_LISTED + 1 });
    names = walk.entries.map((e) => relative(path, e.path) + (e.kind === "directory" ? "/" : ""));
    truncated = walk.truncated;
  }
  if (names.length > MAX_LISTED) {
    names = names.slice(0, MAX_LISTED);
    truncated = true;
  }
  const note = truncated ? `\n[Only the first ${names.length} entries are shown.]` : "";
  const text = names.length ? names.join("\n") + note : `${path} is empty.`;
  return textResult(text, { path, entries: names, truncated });
}

/** Whether `rel` or a directory above it is matched by `excluded`. */
function excludedPath(rel: string, excluded: (p: string) => boolean): boolean {
  const parts = rel.split("/");
  for (let i = 1; i <= parts.length; i++) {
    if (excluded(parts.slice(0, i).join("/"))) return true;
  }
  return false;
}

/** `search_files`. */
export async function searchFilesTool(ctx: FileToolContext, args: Args): Promise<ToolResult> {
  const path = ctx.paths.resolve(args, "path");
  const pattern = requiredString(args, "pattern");
  let matches: (p: string) => boolean;
  let excluded: (p: string) => boolean;
  try {
    matches = globMatcher(pattern);
    excluded = anyGlob(optionalStrings(args, "exclude") ?? []);
  } catch (err) {
    throw new ToolInputError(err instanceof Error ? err.message : String(err));
  }
  const walk = await ctx.fs.walk(path, {});
  const found: string[] = [];
  let truncated = walk.truncated;
  for (const e of walk.entries) {
    const rel = relative(path, e.path);
    if (rel === "" || rel === e.path || excludedPath(rel, excluded) || !matches(rel)) continue;
    if (found.length === MAX_MATCHES) {
      truncated = true;
      break;
    }
    found.push(e.path + (e.kind === "directory" ? "/" : ""));
  }
  const notes = [
    ...(truncated ? [`[The search stopped at a limit; narrow the path or the pattern.]`] : []),
    ...walk.errors.slice(0, 5).map((e) => `[Not searched: ${e.message}]`),
  ];
  const text = (found.length ? found.join("\n") : `No match for ${pattern} below ${path}.`) +
    (notes.length ? `\n${notes.join("\n")}` : "");
  return textResult(text, { path, pattern, matches: found, truncated });
}
