/**
 * {@linkcode FileSystem} on the local disk through `node:fs/promises`, so it
 * runs unchanged under Deno and Node. This file holds the class and the
 * simple operations; the larger ones live beside it: `atomic_write.ts`,
 * `listing.ts`, `copy.ts` (with `copy_plan.ts`), `ranged_read.ts`,
 * `write_in_place.ts`, `rename.ts`, `local_streams.ts`, the rules of
 * ranges and placements in `range.ts`, and the error rules in `errno.ts`.
 *
 * Errors the operating system reports (or would report) keep their POSIX
 * name and are of kind `io`; requests this module refuses by its own rules
 * (copying a directory without `recursive`, copying a directory into
 * itself, unsupported file types, files over the read limit) and any
 * `EINVAL` are of kind `invalidInput`.
 *
 * @module
 */
import * as fsp from "node:fs/promises";
import { basename } from "node:path";
import { errnoOf } from "../runtime/errno.ts";
import { atomicWrite } from "./atomic_write.ts";
import { copyPath } from "./copy.ts";
import { orOsError, osError, refused } from "./errno.ts";
import { listDirectory } from "./listing.ts";
import { localReadStream, localWriteStream } from "./local_streams.ts";
import { checkPlacement, checkRange } from "./range.ts";
import { openRegularFile, overLimit, readRangeOf, readToEnd } from "./ranged_read.ts";
import { renamePath } from "./rename.ts";
import { READ_OP, WRITE_OP } from "./stream_target.ts";
import { walkPlan, walkTree } from "./walk.ts";
import { writeInPlace } from "./write_in_place.ts";
import { checkedPath, withoutTrailingSlashes } from "./paths.ts";
import { metadataOf, statOrUndefined } from "./stat.ts";
import type * as types from "./types.ts";
import { FileSystemError } from "./types.ts";

/** The default largest file `readFile` returns: 128 MiB. */
export const DEFAULT_MAX_READ_FILE_BYTES: number = 128 * 1024 * 1024;

/** Options of {@linkcode LocalFileSystem}. */
export interface LocalFileSystemOptions {
  /**
   * `readFile` refuses larger files with `EFBIG` instead of reading them
   * into memory (default {@linkcode DEFAULT_MAX_READ_FILE_BYTES}).
   */
  maxReadFileBytes?: number;
}

/**
 * The local filesystem with exec-server.v0 semantics.
 *
 * - `writeFile` is atomic: it writes a temp file in the target's directory,
 *   fsyncs it and renames it over the target, so a failure never leaves a
 *   half-written file; the old file's mode (and, when permitted, owner) is
 *   kept; writing through a symlink replaces the file the link points to.
 * - `readDirectory` lists entries sorted by name; a symlink entry reports
 *   what it points to, and neither flag when it dangles.
 * - `copy` recreates symlinks as symlinks (never following them), refuses
 *   fifos, sockets and devices before copying anything, refuses to copy a
 *   directory into itself (compared by real path), and merges only into
 *   real directories, never through a symlink.
 *
 * @example
 * ```ts
 * import { LocalFileSystem } from "./local.ts";
 * const fs = new LocalFileSystem({ maxReadFileBytes: 1024 * 1024 });
 * await fs.writeFile("/tmp/hello.txt", new TextEncoder().encode("hi"));
 * new TextDecoder().decode(await fs.readFile("/tmp/hello.txt")); // "hi"
 * ```
 */
export class LocalFileSystem implements types.FileSystem {
  #maxReadFileBytes: number;

  /** Create a filesystem with the given read limit. */
  constructor(options: LocalFileSystemOptions = {}) {
    const max = options.maxReadFileBytes ?? DEFAULT_MAX_READ_FILE_BYTES;
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new RangeError(`maxReadFileBytes must be a non-negative integer, got ${max}`);
    }
    this.#maxReadFileBytes = max;
  }

  /** The largest file {@linkcode LocalFileSystem.readFile} returns, in bytes. */
  get maxReadFileBytes(): number {
    return this.#maxReadFileBytes;
  }

  /**
   * Read a whole regular file (symlinks followed). Refuses directories
   * (`EISDIR`), other non-regular files (`EINVAL`) and files over the limit
   * (`EFBIG`), the last checked before any byte is read.
   */
  async readFile(path: string): Promise<Uint8Array> {
    const p = checkedPath(READ_OP, path);
    const opened = await openRegularFile(READ_OP, p);
    try {
      if (opened.size > this.#maxReadFileBytes) {
        throw overLimit(p, opened.size, this.#maxReadFileBytes);
      }
      return await readToEnd(opened.handle, p, 0, opened.size, this.#maxReadFileBytes);
    } catch (err) {
      throw osError(READ_OP, p, err);
    } finally {
      await opened.handle.close().catch(() => {});
    }
  }

  /**
   * Read `length` bytes from `offset` of a regular file (default: from the
   * start, to the end), with the file's size and whether the bytes reach
   * its end. Past the end is no bytes and `eof`. Refuses what `readFile`
   * refuses; `length` over the read limit is `EINVAL`, and without
   * `length` a rest of the file over the limit is `EFBIG`.
   */
  async readRange(
    path: string,
    options: types.ReadRangeOptions = {},
  ): Promise<types.ReadRangeResult> {
    const p = checkedPath(READ_OP, path);
    const range = checkRange(READ_OP, p, options, this.#maxReadFileBytes);
    const opened = await openRegularFile(READ_OP, p);
    try {
      return await readRangeOf(opened, p, range.offset, range.length, this.#maxReadFileBytes);
    } catch (err) {
      throw osError(READ_OP, p, err);
    } finally {
      await opened.handle.close().catch(() => {});
    }
  }

  /**
   * Create or replace a file atomically (temp file, fsync, rename). Refuses
   * directories (`EISDIR`) and existing non-regular files (`EINVAL`). With
   * `append` or `offset` the bytes are written into the file itself
   * (created if missing, never truncated): not atomic.
   */
  async writeFile(
    path: string,
    data: Uint8Array,
    options: types.WriteFileOptions = {},
  ): Promise<void> {
    const p = checkedPath(WRITE_OP, path);
    const placement = checkPlacement(WRITE_OP, p, options);
    if (placement.kind === "replace") await atomicWrite(p, data);
    else await writeInPlace(p, data, placement);
  }

  /**
   * Move a file, symlink or directory with `rename(2)`: atomic, replacing
   * an existing destination; across filesystems `EXDEV` (nothing is
   * copied). A regular file is flushed to disk first.
   */
  async rename(sourcePath: string, destinationPath: string): Promise<void> {
    const src = checkedPath("rename", sourcePath);
    const dst = checkedPath("rename", destinationPath);
    await renamePath(src, dst);
  }

  /**
   * A regular file's bytes as a stream of chunks of at most `chunkBytes`
   * (default 1 MiB), whatever the file's size; failures error the stream.
   */
  readStream(path: string, options?: types.ReadStreamOptions): ReadableStream<Uint8Array> {
    return localReadStream(path, options);
  }

  /**
   * A stream that writes a temporary file beside `path` and renames it
   * over `path` on close; abort or failure removes it.
   */
  writeStream(path: string, options?: types.WriteStreamOptions): WritableStream<Uint8Array> {
    return localWriteStream(path, options);
  }

  /**
   * Create a directory. With `recursive` (default true) missing parents are
   * created and an existing directory is fine; without it an existing path
   * is `EEXIST` and a missing parent `ENOENT`.
   */
  async createDirectory(path: string, options: types.CreateDirectoryOptions = {}): Promise<void> {
    const op = "createDirectory";
    const p = checkedPath(op, path);
    await orOsError(op, p, () => fsp.mkdir(p, { recursive: options.recursive ?? true }));
  }

  /** Describe a path, following symlinks; unknown times are 0. */
  async getMetadata(path: string): Promise<types.FileMetadata> {
    const op = "getMetadata";
    const p = checkedPath(op, path);
    return metadataOf(await orOsError(op, p, () => fsp.stat(p)));
  }

  /**
   * Whether `path` itself is a symlink, and the size of what it leads to
   * (the symlink's own size when it dangles).
   */
  async linkDetails(path: string): Promise<{ isSymlink: boolean; size: number }> {
    const op = "getMetadata";
    const p = checkedPath(op, path);
    const link = await orOsError(op, p, () => fsp.lstat(p));
    if (!link.isSymbolicLink()) return { isSymlink: false, size: link.size };
    const target = await statOrUndefined(p);
    return { isSymlink: true, size: (target ?? link).size };
  }

  /** The absolute path with every symlink, `.` and `..` resolved. */
  async canonicalize(path: string): Promise<string> {
    const op = "canonicalize";
    const p = checkedPath(op, path);
    return await orOsError(op, p, () => fsp.realpath(p));
  }

  /**
   * List a directory, sorted by name (JavaScript string order). Symlinks
   * report their target's type; a dangling one reports neither flag.
   */
  async readDirectory(path: string): Promise<types.DirectoryEntry[]> {
    return await listDirectory(checkedPath("readDirectory", path));
  }

  /**
   * List the tree at `path` breadth first within the bounds of `options`
   * (see {@linkcode types.WalkOptions}). A file, or a symlink not followed,
   * has no entries; a missing path is `ENOENT`; a directory below that
   * cannot be read is reported in `errors`.
   */
  async walk(path: string, options?: types.WalkOptions): Promise<types.WalkResult> {
    const p = checkedPath("walk", path);
    return await walkTree(p, walkPlan("walk", p, options));
  }

  /**
   * Remove a file, symlink (never its target) or directory. `recursive`
   * (default true) removes a directory's contents; `force` (default true)
   * makes a missing path a success. Refuses to remove `/`, a path ending in
   * `.` or `..`, and a symlink or file named with a trailing slash.
   */
  async remove(path: string, options: types.RemoveOptions = {}): Promise<void> {
    const op = "remove";
    const p = checkedPath(op, path);
    const recursive = options.recursive ?? true;
    const force = options.force ?? true;
    // `lstat("link/")` follows the link, and the runtimes then disagree on
    // what removing it means (Deno emptied the target, Node did nothing):
    // the entry itself is looked at without its trailing slashes instead.
    const entry = withoutTrailingSlashes(p);
    try {
      const st = await fsp.lstat(entry);
      if (st.isDirectory()) {
        if (await fsp.realpath(entry) === "/") {
          throw refused(op, p, "EINVAL", "refusing to remove the root directory");
        }
        const last = basename(entry);
        if (last === "." || last === "..") {
          // It names a directory through what comes before it, a symlink
          // included; `rm` refuses these too.
          throw refused(op, p, "EINVAL", `refusing to remove a path ending in "${last}"`);
        }
        if (recursive) await fsp.rm(entry, { recursive: true });
        else await fsp.rmdir(entry);
      } else if (entry !== p) {
        // A trailing slash asks for a directory. For a symlink to one,
        // removing the target would break the promise that a link's target
        // is never touched, and removing the link may not be what was
        // meant, so neither is done.
        const detail = st.isSymbolicLink()
          ? `not a directory: ${entry} is a symlink; to remove the link, name it without the trailing slash`
          : "not a directory";
        throw new FileSystemError("io", "ENOTDIR", p, `${op} ${p}: ${detail}`);
      } else {
        await fsp.unlink(entry);
      }
    } catch (err) {
      // Also covers the path vanishing midway through (a concurrent remove).
      if (force && errnoOf(err) === "ENOENT") return;
      throw osError(op, p, err);
    }
  }

  /**
   * Copy a file, a symlink (as a symlink) or, with `recursive`, a directory
   * tree. An existing destination file is overwritten and an existing
   * destination directory is merged into; a symlink or file where a
   * directory goes is `EEXIST`, never merged through.
   */
  async copy(
    sourcePath: string,
    destinationPath: string,
    options: types.CopyOptions = {},
  ): Promise<void> {
    const src = checkedPath("copy", sourcePath);
    const dst = checkedPath("copy", destinationPath);
    await copyPath(src, dst, options);
  }
}
