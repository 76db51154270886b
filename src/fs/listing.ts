/**
 * `readDirectory` of the local filesystem: entries sorted by name, each
 * symlink reporting what it points to (neither flag when it dangles), and
 * entry types the filesystem did not report looked up with `stat`.
 *
 * @module
 */
import type { Dirent } from "node:fs";
import * as fsp from "node:fs/promises";
import { orOsError } from "./errno.ts";
import { child } from "./paths.ts";
import type { DirectoryEntry } from "./types.ts";

/**
 * List the directory at `path` (already checked to be absolute), sorted by
 * name in JavaScript string order; failures are
 * `FileSystemError`s.
 *
 * @example
 * ```ts
 * import { listDirectory } from "./listing.ts";
 * await listDirectory("/"); // [{ fileName: "bin", isDirectory: true, isFile: false }, ...]
 * ```
 */
export function listDirectory(path: string): Promise<DirectoryEntry[]> {
  return orOsError("readDirectory", path, async () => {
    const dirents = await fsp.readdir(path, { withFileTypes: true });
    const entries = await Promise.all(dirents.map((d) => entryOf(path, d)));
    return entries.sort((a, b) => a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0);
  });
}

async function entryOf(dir: string, d: Dirent): Promise<DirectoryEntry> {
  if (!needsStat(d)) {
    return { fileName: d.name, isDirectory: d.isDirectory(), isFile: d.isFile() };
  }
  try {
    const st = await fsp.stat(child(dir, d.name));
    return { fileName: d.name, isDirectory: st.isDirectory(), isFile: st.isFile() };
  } catch {
    return { fileName: d.name, isDirectory: false, isFile: false };
  }
}

/** Whether an entry's type must come from `stat`: a symlink, or no type known. */
function needsStat(d: Dirent): boolean {
  if (d.isSymbolicLink()) return true;
  // Some filesystems do not report entry types (DT_UNKNOWN).
  return !d.isFile() && !d.isDirectory() && !d.isFIFO() && !d.isSocket() &&
    !d.isCharacterDevice() && !d.isBlockDevice();
}
