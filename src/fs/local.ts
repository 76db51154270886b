/**
 * {@linkcode FileSystem} on the local disk through `node:fs/promises`, so it
 * runs unchanged under Deno and Node. This file holds the class and the
 * simple operations; the larger ones live beside it: `atomic_write.ts`,
 * `listing.ts`, `copy.ts` (with `copy_plan.ts`), and the error rules in
 * `errno.ts`.
 *
 * Errors the operating system reports (or would report) keep their POSIX
 * name and are of kind `io`; requests this module refuses by its own rules
 * (copying a directory without `recursive`, copying a directory into
 * itself, unsupported file types, files over the read limit) and any
 * `EINVAL` are of kind `invalidInput`.
 *
 * @module
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { basename } from "node:path";
import { errnoOf } from "../runtime/errno.ts";
import { atomicWrite } from "./atomic_write.ts";
import { copyPath } from "./copy.ts";
import { orOsError, osError, refused } from "./errno.ts";
import { listDirectory } from "./listing.ts";
import { checkedPath, withoutTrailingSlashes } from "./paths.ts";
import { kindOf, metadataOf, statOrUndefined } from "./stat.ts";
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

/** Read size once a file turns out longer than `stat` said (e.g. `/proc` files). */
const READ_CHUNK_BYTES = 64 * 1024;

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
    const op = "readFile";
    const p = checkedPath(op, path);
    // O_NONBLOCK so that opening a fifo returns at once and is refused
    // below instead of hanging until some writer appears; O_NOCTTY so that
    // opening a terminal (refused below too) can never make it the
    // controlling terminal of a server that runs without one.
    const flags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
    const handle = await orOsError(op, p, () => fsp.open(p, flags));
    try {
      const st = await handle.stat();
      if (st.isDirectory()) throw osError(op, p, { code: "EISDIR" });
      if (!st.isFile()) throw refused(op, p, "EINVAL", `${kindOf(st)} is not a regular file`);
      this.#checkSize(p, st.size);
      return await this.#readAll(handle, p, st.size);
    } catch (err) {
      throw osError(op, p, err);
    } finally {
      await handle.close().catch(() => {});
    }
  }

  #checkSize(path: string, size: number): void {
    if (size > this.#maxReadFileBytes) {
      throw refused(
        "readFile",
        path,
        "EFBIG",
        `file is ${size} bytes, over the read limit of ${this.#maxReadFileBytes} bytes`,
      );
    }
  }

  /** Read to EOF, trusting `expected` for the first read but never the limit. */
  async #readAll(handle: fsp.FileHandle, path: string, expected: number): Promise<Uint8Array> {
    const first = new Uint8Array(expected);
    let filled = 0;
    while (filled < expected) {
      const { bytesRead } = await handle.read(first, filled, expected - filled, null);
      if (bytesRead === 0) return first.subarray(0, filled);
      filled += bytesRead;
    }
    // The file may be longer than stat said: it grew, or it is a /proc file
    // that reports size 0.
    const more: Uint8Array[] = [];
    let total = filled;
    for (;;) {
      const chunk = new Uint8Array(READ_CHUNK_BYTES);
      const { bytesRead } = await handle.read(chunk, 0, chunk.byteLength, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      this.#checkSize(path, total);
      more.push(chunk.subarray(0, bytesRead));
    }
    if (more.length === 0) return first;
    const out = new Uint8Array(total);
    out.set(first, 0);
    let offset = filled;
    for (const chunk of more) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return out;
  }

  /**
   * Create or replace a file atomically (temp file, fsync, rename). Refuses
   * directories (`EISDIR`) and existing non-regular files (`EINVAL`).
   */
  async writeFile(path: string, data: Uint8Array): Promise<void> {
    await atomicWrite(checkedPath("writeFile", path), data);
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
