/**
 * The file tools that read, write and edit one file or entry, through the
 * target's {@linkcode FileSystem} (local or remote, sandboxed or not):
 * `read_file`, `write_file`, `edit_file`, `get_file_info`,
 * `create_directory`, `move_file` and `remove`.
 *
 * @module
 */
import { posix } from "node:path";
import type { FileSystem } from "../fs/types.ts";
import { encodeBase64 } from "../protocol/base64.ts";
import { FileSystemError } from "../fs/types.ts";
import { unifiedDiff } from "../util/unified_diff.ts";
import { applyEdits, readEdits } from "./text_edits.ts";
import { readTextWindow } from "./text_window.ts";
import {
  type Args,
  optionalBoolean,
  optionalInt,
  type PathResolver,
  requiredString,
  ToolInputError,
} from "./tool_args.ts";
import { textResult, type ToolResult } from "./tool_result.ts";

/** What the file tools work with. */
export interface FileToolContext {
  /** The target's files. */
  fs: FileSystem;
  /** Path arguments made absolute. */
  paths: PathResolver;
}

/** Images `read_file` returns as image content, by extension. */
const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

/** The largest image `read_file` returns (clients reject bigger ones anyway). */
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

const encoder = new TextEncoder();

/** `read_file`. */
export async function readFileTool(ctx: FileToolContext, args: Args): Promise<ToolResult> {
  const path = ctx.paths.resolve(args, "path");
  const meta = await ctx.fs.getMetadata(path);
  if (meta.isDirectory) {
    throw new ToolInputError(`${path} is a directory: use list_directory`);
  }
  const mimeType = IMAGE_TYPES[posix.extname(path).toLowerCase()];
  if (mimeType) {
    const { data, size } = await ctx.fs.readRange(path, { length: MAX_IMAGE_BYTES + 1 });
    if (size > MAX_IMAGE_BYTES) {
      throw new ToolInputError(`${path} is an image of ${size} bytes, over ${MAX_IMAGE_BYTES}`);
    }
    return { content: [{ type: "image", data: encodeBase64(data), mimeType }] };
  }
  const window = await readTextWindow(ctx.fs, path, {
    offset: optionalInt(args, "offset", 1),
    length: optionalInt(args, "length", 0),
    head: optionalInt(args, "head", 0),
    tail: optionalInt(args, "tail", 0),
  });
  // No structuredContent: clients that show only it (the Codex CLI) would
  // show the model JSON-escaped text instead of the file.
  const content: ToolResult["content"] = [{ type: "text", text: window.text }];
  if (window.note) content.push({ type: "text", text: window.note });
  return { content };
}

/** `write_file`. */
export async function writeFileTool(ctx: FileToolContext, args: Args): Promise<ToolResult> {
  const path = ctx.paths.resolve(args, "path");
  const content = requiredString(args, "content");
  const append = optionalBoolean(args, "append") ?? false;
  await ensureParent(ctx.fs, path);
  const data = encoder.encode(content);
  await ctx.fs.writeFile(path, data, append ? { append: true } : undefined);
  return textResult(`${append ? "Appended" : "Wrote"} ${data.length} bytes to ${path}.`, {
    path,
    bytes: data.length,
  });
}

/** `edit_file`. */
export async function editFileTool(ctx: FileToolContext, args: Args): Promise<ToolResult> {
  const path = ctx.paths.resolve(args, "path");
  const edits = readEdits(args);
  const dryRun = optionalBoolean(args, "dryRun") ?? false;
  const before = decodeText(await ctx.fs.readFile(path), path);
  const after = applyEdits(before, edits, path);
  const diff = unifiedDiff(before, after, { path: path.replace(/^\//, "") });
  if (!dryRun && after !== before) await ctx.fs.writeFile(path, encoder.encode(after));
  const head = dryRun ? "Dry run, nothing written. " : "";
  const summary = after === before ? "No change." : diff;
  return textResult(`${head}${summary}`, { path, diff, changed: after !== before, dryRun });
}

/** `get_file_info`. */
export async function getFileInfoTool(ctx: FileToolContext, args: Args): Promise<ToolResult> {
  const path = ctx.paths.resolve(args, "path");
  const meta = await ctx.fs.getMetadata(path);
  const type = meta.isDirectory ? "directory" : meta.isFile ? "file" : "other";
  const size = meta.isFile ? (await ctx.fs.readRange(path, { length: 0 })).size : undefined;
  const iso = (ms: number) => ms > 0 ? new Date(ms).toISOString() : null;
  const info = {
    path,
    type,
    ...(size === undefined ? {} : { size }),
    modified: iso(meta.modifiedAtMs),
    created: iso(meta.createdAtMs),
  };
  const text = Object.entries(info).map(([k, v]) => `${k}: ${v ?? "unknown"}`).join("\n");
  return textResult(text, info);
}

/** `create_directory`. */
export async function createDirectoryTool(ctx: FileToolContext, args: Args): Promise<ToolResult> {
  const path = ctx.paths.resolve(args, "path");
  await ctx.fs.createDirectory(path, { recursive: true });
  return textResult(`Created ${path} (or it existed).`, { path });
}

/** `move_file`. */
export async function moveFileTool(ctx: FileToolContext, args: Args): Promise<ToolResult> {
  const source = ctx.paths.resolve(args, "source");
  const destination = ctx.paths.resolve(args, "destination");
  if (await exists(ctx.fs, destination)) {
    throw new ToolInputError(`${destination} exists: remove it first, or choose another name`);
  }
  await ensureParent(ctx.fs, destination);
  await ctx.fs.rename(source, destination);
  return textResult(`Moved ${source} to ${destination}.`, { source, destination });
}

/** `remove`. */
export async function removeTool(ctx: FileToolContext, args: Args): Promise<ToolResult> {
  const path = ctx.paths.resolve(args, "path");
  const recursive = optionalBoolean(args, "recursive") ?? false;
  const meta = await ctx.fs.getMetadata(path).catch(() => undefined);
  if (meta?.isDirectory && !recursive) {
    throw new ToolInputError(`${path} is a directory: pass recursive: true to remove it`);
  }
  await ctx.fs.remove(path, { recursive, force: false });
  return textResult(`Removed ${path}.`, { path });
}

/** Whether anything is at `path` (a missing parent counts as nothing). */
async function exists(fs: FileSystem, path: string): Promise<boolean> {
  try {
    await fs.getMetadata(path);
    return true;
  } catch (err) {
    if (err instanceof FileSystemError && (err.errno === "ENOENT" || err.errno === "ENOTDIR")) {
      return false;
    }
    throw err;
  }
}

/** Create the parent directories of `path` that are missing. */
async function ensureParent(fs: FileSystem, path: string): Promise<void> {
  const parent = posix.dirname(path);
  if (!(await exists(fs, parent))) await fs.createDirectory(parent, { recursive: true });
}

/** `bytes` as text, refusing what is not UTF-8 (an edit would corrupt it). */
function decodeText(bytes: Uint8Array, path: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ToolInputError(`${path} is not UTF-8 text: edit_file cannot change it`);
  }
}
