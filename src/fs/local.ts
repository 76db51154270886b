/**
 * {@linkcode FileSystem} on the local disk through `node:fs/promises`, so it
 * runs unchanged under Deno and Node.
 *
 * Errors the operating system reports (or would report) keep their POSIX
 * name and are of kind `io`; requests this module refuses by its own rules
 * (copying a directory without `recursive`, copying a directory into
 * itself, unsupported file types, files over the read limit) and any
 * `EINVAL` are of kind `invalidInput`.
 *
 * @module
 */
import { constants, type Dirent, type Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { constants as osConstants } from "node:os";
import { errnoOf as protocolErrnoOf } from "../protocol/errors.ts";
import { absolutePath } from "../protocol/validate.ts";
import {
  type CopyOptions,
  type CreateDirectoryOptions,
  type DirectoryEntry,
  type FileMetadata,
  type FileSystem,
  FileSystemError,
  type RemoveOptions,
} from "./types.ts";

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

/** Symlinks followed before `writeFile` gives up with `ELOOP` (Linux's own limit). */
const MAX_SYMLINK_HOPS = 40;
/** Read size once a file turns out longer than `stat` said (e.g. `/proc` files). */
const READ_CHUNK_BYTES = 64 * 1024;

const ERRNO_TEXT: Record<string, string> = {
  EACCES: "permission denied",
  EBUSY: "resource busy",
  EDQUOT: "disk quota exceeded",
  EEXIST: "file exists",
  EFBIG: "file too large",
  EINVAL: "invalid argument",
  EIO: "input/output error",
  EISDIR: "is a directory",
  ELOOP: "too many levels of symbolic links",
  EMFILE: "too many open files",
  ENAMETOOLONG: "file name too long",
  ENOENT: "no such file or directory",
  ENOSPC: "no space left on device",
  ENOTDIR: "not a directory",
  ENOTEMPTY: "directory not empty",
  ENXIO: "no such device or address",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ETXTBSY: "text file busy",
  EXDEV: "cross-device link",
};

const ERRNO_NAMES = new Map<number, string>(
  Object.entries(osConstants.errno).map(([name, value]) => [value, name]),
);

/**
 * The POSIX name of an OS error. Deno leaves `code` unset on some errors
 * (e.g. EFBIG from a write), whose message then ends in `(os error N)`.
 */
function errnoOf(err: unknown): string | undefined {
  const known = protocolErrnoOf(err);
  if (known) return known;
  const message = err instanceof Error ? err.message : "";
  const match = /\(os error (\d+)\)/.exec(message);
  return match ? ERRNO_NAMES.get(Number(match[1])) : undefined;
}

/**
 * Wrap an OS error. The message is built from the errno rather than taken
 * from the runtime, because the runtime's text names internal paths (the
 * temp file of `writeFile`) and differs between Deno and Node.
 */
function osError(
  op: string,
  path: string,
  err: unknown,
  subject: string = path,
): FileSystemError {
  if (err instanceof FileSystemError) return err;
  const errno = errnoOf(err);
  const text = (errno && ERRNO_TEXT[errno]) ??
    (err instanceof Error ? err.message : String(err));
  const detail = errno && !ERRNO_TEXT[errno] ? `${errno}: ${text}` : text;
  return new FileSystemError(
    errno === "EINVAL" ? "invalidInput" : "io",
    errno,
    path,
    `${op} ${subject}: ${detail}`,
  );
}

function refused(op: string, path: string, errno: string, detail: string): FileSystemError {
  return new FileSystemError("invalidInput", errno, path, `${op} ${path}: ${detail}`);
}

function kindOf(st: Stats): string {
  if (st.isFIFO()) return "a fifo";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSymbolicLink()) return "a symlink";
  return "an unsupported file type";
}

function epochMs(ms: number | null | undefined): number {
  // Some filesystems and runtimes report no birth time (0, NaN or null).
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? Math.floor(ms) : 0;
}

function tempName(target: string): string {
  const random = new Uint8Array(6);
  crypto.getRandomValues(random);
  const hex = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
  // A short prefix of the name helps a human spot leftovers after a crash
  // without risking ENAMETOOLONG on a 255-byte name.
  const stem = Array.from(basename(target)).slice(0, 32).join("");
  return child(dirname(target), `.${stem}.${hex}.tmp`);
}

/**
 * `dir/name` without normalizing: `..` after a symlinked directory means
 * something else to the kernel than to a lexical `join`.
 */
function child(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

async function writeAll(handle: fsp.FileHandle, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.byteLength) {
    const { bytesWritten } = await handle.write(data, offset, data.byteLength - offset, null);
    if (bytesWritten <= 0) {
      throw Object.assign(new Error("write made no progress"), { code: "EIO" });
    }
    offset += bytesWritten;
  }
}

async function syncDirectory(dir: string): Promise<void> {
  // Makes the rename durable; some filesystems refuse fsync on a directory,
  // and the rename has already happened, so failures are ignored.
  try {
    const handle = await fsp.open(dir, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort
  }
}

async function statOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await fsp.stat(path);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * Follow symlinks in the last component of `path`, so that writing through
 * a link replaces the file it points to rather than the link itself. A
 * dangling link yields the path it points to (the file gets created there).
 */
async function resolveFinalSymlinks(op: string, path: string): Promise<string> {
  let current = path;
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    let st: Stats;
    try {
      st = await fsp.lstat(current);
    } catch {
      // Missing (or unreachable): the open of the temp file reports why.
      return current;
    }
    if (!st.isSymbolicLink()) return current;
    const target = await fsp.readlink(current);
    current = isAbsolute(target) ? target : `${dirname(current)}/${target}`;
  }
  throw osError(op, path, { code: "ELOOP" });
}

/**
 * The real path of `path`, where only a prefix has to exist: the missing
 * rest is appended. Used to see where a copy would land.
 */
async function resolveExisting(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = await fsp.realpath(current);
      return missing.length === 0 ? real : resolve(real, ...missing);
    } catch (err) {
      if (errnoOf(err) !== "ENOENT" || current === "/") throw err;
      missing.unshift(basename(current));
      current = dirname(current);
    }
  }
}

function isSameOrInside(candidate: string, root: string): boolean {
  if (candidate === root) return true;
  return candidate.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** One step of a planned directory copy. */
type CopyStep =
  | { kind: "dir"; src: string; dst: string; mode: number }
  | { kind: "file" | "symlink"; src: string; dst: string };

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
export class LocalFileSystem implements FileSystem {
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
    const p = localPath(op, path);
    let handle: fsp.FileHandle;
    try {
      // O_NONBLOCK so that opening a fifo returns at once and is refused
      // below instead of hanging until some writer appears; O_NOCTTY so
      // that opening a terminal (refused below too) can never make it the
      // controlling terminal of a server that runs without one.
      handle = await fsp.open(p, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch (err) {
      throw osError(op, p, err);
    }
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
    const op = "writeFile";
    const p = localPath(op, path);
    if (p.endsWith("/")) throw osError(op, p, { code: "EISDIR" });
    let target: string;
    let existing: Stats | undefined;
    try {
      target = await resolveFinalSymlinks(op, p);
      existing = await statOrUndefined(target);
    } catch (err) {
      throw osError(op, p, err);
    }
    if (existing?.isDirectory()) throw osError(op, p, { code: "EISDIR" });
    if (existing && !existing.isFile()) {
      throw refused(op, p, "EINVAL", `${kindOf(existing)} cannot be replaced by a file`);
    }
    const temp = tempName(target);
    let handle: fsp.FileHandle | undefined;
    try {
      // A replacement starts private so the new bytes are never visible
      // under looser permissions than the old file had; a new file gets
      // the usual 0666 minus umask.
      handle = await fsp.open(
        temp,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
        existing ? 0o600 : 0o666,
      );
    } catch (err) {
      throw osError(op, p, err);
    }
    try {
      await writeAll(handle, data);
      if (existing) {
        // Owner first: chown clears set-id bits that chmod then restores.
        await handle.chown(existing.uid, existing.gid).catch(() => {});
        await handle.chmod(existing.mode & 0o7777);
      }
      await handle.sync();
      await handle.close();
      handle = undefined;
      await fsp.rename(temp, target);
    } catch (err) {
      await handle?.close().catch(() => {});
      await fsp.unlink(temp).catch(() => {});
      throw osError(op, p, err);
    }
    await syncDirectory(dirname(target));
  }

  /**
   * Create a directory. With `recursive` (default true) missing parents are
   * created and an existing directory is fine; without it an existing path
   * is `EEXIST` and a missing parent `ENOENT`.
   */
  async createDirectory(path: string, options: CreateDirectoryOptions = {}): Promise<void> {
    const op = "createDirectory";
    const p = localPath(op, path);
    try {
      await fsp.mkdir(p, { recursive: options.recursive ?? true });
    } catch (err) {
      throw osError(op, p, err);
    }
  }

  /** Describe a path, following symlinks; unknown times are 0. */
  async getMetadata(path: string): Promise<FileMetadata> {
    const op = "getMetadata";
    const p = localPath(op, path);
    let st: Stats;
    try {
      st = await fsp.stat(p);
    } catch (err) {
      throw osError(op, p, err);
    }
    return {
      isDirectory: st.isDirectory(),
      isFile: st.isFile(),
      createdAtMs: epochMs(st.birthtimeMs),
      modifiedAtMs: epochMs(st.mtimeMs),
    };
  }

  /**
   * List a directory, sorted by name (JavaScript string order). Symlinks
   * report their target's type; a dangling one reports neither flag.
   */
  async readDirectory(path: string): Promise<DirectoryEntry[]> {
    const op = "readDirectory";
    const p = localPath(op, path);
    try {
      const dirents = await fsp.readdir(p, { withFileTypes: true });
      const entries = await Promise.all(dirents.map(async (d): Promise<DirectoryEntry> => {
        if (!needsStat(d)) {
          return { fileName: d.name, isDirectory: d.isDirectory(), isFile: d.isFile() };
        }
        try {
          const st = await fsp.stat(child(p, d.name));
          return { fileName: d.name, isDirectory: st.isDirectory(), isFile: st.isFile() };
        } catch {
          return { fileName: d.name, isDirectory: false, isFile: false };
        }
      }));
      return entries.sort((a, b) => a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0);
    } catch (err) {
      throw osError(op, p, err);
    }
  }

  /**
   * Remove a file, symlink (never its target) or directory. `recursive`
   * (default true) removes a directory's contents; `force` (default true)
   * makes a missing path a success. Refuses to remove `/`, a path ending in
   * `.` or `..`, and a symlink or file named with a trailing slash.
   */
  async remove(path: string, options: RemoveOptions = {}): Promise<void> {
    const op = "remove";
    const p = localPath(op, path);
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
    options: CopyOptions = {},
  ): Promise<void> {
    const op = "copy";
    const src = localPath(op, sourcePath);
    const dst = localPath(op, destinationPath);
    let st: Stats;
    try {
      st = await fsp.lstat(src);
    } catch (err) {
      throw osError(op, src, err);
    }
    if (st.isDirectory()) {
      if (!options.recursive) {
        throw refused(op, src, "EISDIR", "is a directory; pass recursive: true to copy it");
      }
      const realSrc = await this.#checkNotInside(src, dst);
      const steps: CopyStep[] = [];
      await planTree(src, dst, st, steps);
      await runPlan(steps, realSrc);
      return;
    }
    if (st.isSymbolicLink()) {
      await copySymlink(src, dst);
      return;
    }
    if (!st.isFile()) {
      throw refused(op, src, "EINVAL", `cannot copy ${kindOf(st)}`);
    }
    await copyRegularFile(src, dst);
  }

  /** Refuse a destination inside the source; returns the source's real path. */
  async #checkNotInside(src: string, dst: string): Promise<string> {
    let realSrc: string;
    let realDst: string;
    try {
      realSrc = await fsp.realpath(src);
    } catch (err) {
      throw osError("copy", src, err);
    }
    try {
      realDst = await resolveExisting(dst);
    } catch (err) {
      throw osError("copy", dst, err);
    }
    if (isSameOrInside(realDst, realSrc)) {
      const where = realDst === dst ? dst : `${dst}, which resolves to ${realDst},`;
      throw refused(
        "copy",
        src,
        "EINVAL",
        `cannot copy a directory into itself: ${where} is inside ${realSrc}`,
      );
    }
    return realSrc;
  }
}

/** Convert a path or `file://` URI to a local absolute path. */
function localPath(op: string, path: string): string {
  if (path.startsWith("/") || !/^file:/i.test(path)) {
    if (!path.startsWith("/")) throw refused(op, path, "EINVAL", "path must be absolute");
    if (path.includes("\0")) throw refused(op, path, "EINVAL", "path must not contain NUL");
    return path;
  }
  // The server's own rules for file URIs, so local and remote agree.
  try {
    return absolutePath(path, "path");
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw refused(op, path, "EINVAL", `not a usable file URI: ${detail}`);
  }
}

/** `path` without trailing slashes, except that `/` stays `/`. */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 1 && path[end - 1] === "/") end--;
  return path.slice(0, end);
}

/** Whether an entry's type must come from `stat`: a symlink, or no type known. */
function needsStat(d: Dirent): boolean {
  if (d.isSymbolicLink()) return true;
  // Some filesystems do not report entry types (DT_UNKNOWN).
  return !d.isFile() && !d.isDirectory() && !d.isFIFO() && !d.isSocket() &&
    !d.isCharacterDevice() && !d.isBlockDevice();
}

/**
 * Walk the source tree before writing anything, so an unsupported entry
 * is refused before a partial copy exists, and a destination inside the
 * source could never make the walk see its own output.
 */
async function planTree(src: string, dst: string, st: Stats, steps: CopyStep[]): Promise<void> {
  steps.push({ kind: "dir", src, dst, mode: st.mode & 0o7777 });
  let names: string[];
  try {
    names = (await fsp.readdir(src)).sort();
  } catch (err) {
    throw osError("copy", src, err);
  }
  for (const name of names) {
    const from = child(src, name);
    const to = child(dst, name);
    let entry: Stats;
    try {
      entry = await fsp.lstat(from);
    } catch (err) {
      throw osError("copy", from, err);
    }
    if (entry.isDirectory()) await planTree(from, to, entry, steps);
    else if (entry.isSymbolicLink()) steps.push({ kind: "symlink", src: from, dst: to });
    else if (entry.isFile()) steps.push({ kind: "file", src: from, dst: to });
    else throw refused("copy", from, "EINVAL", `cannot copy ${kindOf(entry)}`);
  }
}

async function runPlan(steps: CopyStep[], realSrc: string): Promise<void> {
  const created: { dst: string; mode: number }[] = [];
  for (const step of steps) {
    if (step.kind === "dir") {
      if (await makeDirectory(step.src, step.dst)) created.push(step);
      else await checkMergeTarget(step.src, step.dst, realSrc);
    } else if (step.kind === "symlink") {
      await copySymlink(step.src, step.dst);
    } else {
      await copyRegularFile(step.src, step.dst, realSrc);
    }
  }
  // Source modes are applied last, deepest first: a read-only source
  // directory must stay writable until its copy is filled.
  for (const dir of created.reverse()) {
    try {
      await fsp.chmod(dir.dst, dir.mode);
    } catch (err) {
      throw osError("copy", dir.dst, err);
    }
  }
}

/**
 * Create `dst` as a directory; false when a real directory already exists
 * there, to be merged into. Anything else in the way, a symlink to a
 * directory included, is `EEXIST` (as `cp` refuses to): merging through a
 * link would write wherever it points, the source itself included.
 */
async function makeDirectory(src: string, dst: string): Promise<boolean> {
  try {
    await fsp.mkdir(dst);
    return true;
  } catch (err) {
    if (errnoOf(err) !== "EEXIST") throw osError("copy", dst, err);
  }
  let existing: Stats;
  try {
    // lstat: only a link named with a trailing slash (`dst/`, at the top
    // level) is followed, as the kernel does; the real path is then
    // checked against the source like any merge target.
    existing = await fsp.lstat(dst);
  } catch (err) {
    throw osError("copy", dst, err);
  }
  if (existing.isDirectory()) return false;
  const what = existing.isSymbolicLink()
    ? "a symlink"
    : existing.isFile()
    ? "a file"
    : kindOf(existing);
  throw new FileSystemError(
    "io",
    "EEXIST",
    dst,
    `copy ${src} -> ${dst}: file exists: ${dst} is ${what}, not a directory to merge into`,
  );
}

/**
 * Refuse to merge into a directory that is really inside the source. The
 * destination was checked before the copy started and every merged
 * directory is a real one, so this only catches a tree changed meanwhile.
 */
async function checkMergeTarget(src: string, dst: string, realSrc: string): Promise<void> {
  let real: string;
  try {
    real = await fsp.realpath(dst);
  } catch (err) {
    throw osError("copy", dst, err);
  }
  if (isSameOrInside(real, realSrc)) {
    throw refused(
      "copy",
      src,
      "EINVAL",
      `cannot copy a directory into itself: ${dst}, which resolves to ${real}, is inside ${realSrc}`,
    );
  }
}

/**
 * Copy one file's bytes and mode over `dst`, following a symlink there.
 * In a tree copy (`realSrc` given) a `dst` that resolves into the source
 * tree is refused: writing through it would change the source.
 */
async function copyRegularFile(src: string, dst: string, realSrc?: string): Promise<void> {
  try {
    const [from, to] = await Promise.all([fsp.stat(src), statOrUndefined(dst)]);
    if (to && to.dev === from.dev && to.ino === from.ino) {
      // Copying would truncate the source before reading it (a hard link,
      // or a destination symlink pointing back at the source).
      throw refused("copy", src, "EINVAL", `${dst} is the same file`);
    }
    if (to && realSrc !== undefined) {
      // Only an existing destination can lead elsewhere; its directory is
      // a real one outside the source, so only a symlink can lead back.
      const real = await fsp.realpath(dst);
      if (isSameOrInside(real, realSrc)) {
        throw refused(
          "copy",
          src,
          "EINVAL",
          `cannot write into the source: ${dst} resolves to ${real}, inside ${realSrc}`,
        );
      }
    }
    await fsp.copyFile(src, dst);
  } catch (err) {
    throw osError("copy", src, err, `${src} -> ${dst}`);
  }
}

/** Recreate the link at `dst` with the same target text, replacing a non-directory there. */
async function copySymlink(src: string, dst: string): Promise<void> {
  let target: string;
  try {
    target = await fsp.readlink(src);
  } catch (err) {
    throw osError("copy", src, err);
  }
  try {
    await fsp.symlink(target, dst);
    return;
  } catch (err) {
    if (errnoOf(err) !== "EEXIST") throw osError("copy", dst, err);
  }
  // Replace atomically: a new link under a temp name renamed over the old
  // entry (rename refuses to replace a directory).
  const temp = tempName(dst);
  try {
    await fsp.symlink(target, temp);
  } catch (err) {
    throw osError("copy", dst, err);
  }
  try {
    await fsp.rename(temp, dst);
  } catch (err) {
    await fsp.unlink(temp).catch(() => {});
    throw osError("copy", dst, err);
  }
}
