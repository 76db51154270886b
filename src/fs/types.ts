/**
 * The filesystem contract shared by the server's local implementation and
 * the client's remote one, so code written against it runs unchanged on
 * either side.
 *
 * @module
 */
import type { WalkOptions, WalkResult } from "../protocol/walk.ts";

export type { WalkEntry, WalkError, WalkOptions, WalkResult } from "../protocol/walk.ts";

/** What `getMetadata` reports (symlinks are followed). */
export interface FileMetadata {
  /** True for a directory. */
  isDirectory: boolean;
  /** True for a regular file. */
  isFile: boolean;
  /** Creation time in ms since the epoch, 0 when unknown. */
  createdAtMs: number;
  /** Modification time in ms since the epoch, 0 when unknown. */
  modifiedAtMs: number;
}

/** One entry of `readDirectory`. */
export interface DirectoryEntry {
  /** The entry's name (not a path). */
  fileName: string;
  /** True for a directory. */
  isDirectory: boolean;
  /** True for a regular file. */
  isFile: boolean;
}

/** Options of `createDirectory`. */
export interface CreateDirectoryOptions {
  /** Create missing parents; an existing directory is fine (default true). */
  recursive?: boolean;
}

/** Options of `remove`. */
export interface RemoveOptions {
  /** Remove directories with their contents (default true). */
  recursive?: boolean;
  /** A missing path is success (default true). */
  force?: boolean;
}

/** Options of `copy`. */
export interface CopyOptions {
  /** Needed to copy a directory (default false). */
  recursive?: boolean;
}

/** Options of `readRange`. */
export interface ReadRangeOptions {
  /** The first byte to read (default 0); past the end reads nothing. */
  offset?: number;
  /**
   * At most this many bytes (default: to the end of the file). Either way
   * no more than the read limit.
   */
  length?: number;
}

/** What `readRange` returns. */
export interface ReadRangeResult {
  /** The bytes read: fewer than asked only at the end of the file. */
  data: Uint8Array;
  /** The file's size when it was read. */
  size: number;
  /** Whether `data` reaches the end of the file. */
  eof: boolean;
}

/** Options of `writeFile`. Without them the write is atomic. */
export interface WriteFileOptions {
  /** Append to the file, creating it if missing. Not atomic. Excludes `offset`. */
  append?: boolean;
  /**
   * Write at this byte offset, creating the file if missing and never
   * truncating it. Not atomic. Excludes `append`.
   */
  offset?: number;
}

/** Options of `readStream`. */
export interface ReadStreamOptions {
  /**
   * The most bytes in one chunk of the stream (and in one request, for a
   * remote filesystem); the default suits the implementation.
   */
  chunkBytes?: number;
}

/** Options of `writeStream`. */
export interface WriteStreamOptions {
  /**
   * The most bytes written at a time (and sent in one request, for a
   * remote filesystem); the default suits the implementation.
   */
  chunkBytes?: number;
}

/**
 * File operations with the exec-server.v0 semantics. Paths are absolute
 * (or `file://` URIs); failures throw {@linkcode FileSystemError}.
 */
export interface FileSystem {
  /** Read a whole file. */
  readFile(path: string): Promise<Uint8Array>;
  /**
   * Part of a file: `length` bytes from `offset`, with the file's size and
   * whether the part reaches its end.
   */
  readRange(path: string, options?: ReadRangeOptions): Promise<ReadRangeResult>;
  /**
   * Create or replace a file atomically; with `append` or `offset`, write
   * into it in place instead.
   */
  writeFile(path: string, data: Uint8Array, options?: WriteFileOptions): Promise<void>;
  /**
   * Move a file, symlink or directory with `rename(2)`: atomic, within one
   * filesystem only (`EXDEV` across filesystems; nothing is copied).
   */
  rename(sourcePath: string, destinationPath: string): Promise<void>;
  /**
   * A regular file's bytes as a stream, in bounded memory whatever its
   * size. Every failure, a bad path included, errors the stream.
   */
  readStream(path: string, options?: ReadStreamOptions): ReadableStream<Uint8Array>;
  /**
   * A stream that writes a file: the bytes go to a temporary file beside
   * it, which replaces the file on close. An aborted or failed stream
   * leaves neither the file changed nor the temporary file behind.
   */
  writeStream(path: string, options?: WriteStreamOptions): WritableStream<Uint8Array>;
  /** Create a directory. */
  createDirectory(path: string, options?: CreateDirectoryOptions): Promise<void>;
  /** Describe a path. */
  getMetadata(path: string): Promise<FileMetadata>;
  /** List a directory. */
  readDirectory(path: string): Promise<DirectoryEntry[]>;
  /**
   * List a directory tree breadth first, within bounds: files and
   * directories only, each real directory read once.
   */
  walk(path: string, options?: WalkOptions): Promise<WalkResult>;
  /** Remove a file or directory. */
  remove(path: string, options?: RemoveOptions): Promise<void>;
  /** Copy a file, symlink or (with `recursive`) directory. */
  copy(sourcePath: string, destinationPath: string, options?: CopyOptions): Promise<void>;
}

/** Whether a failure is the caller's fault (bad input) or the system's. */
export type FileSystemErrorKind = "invalidInput" | "io";

/**
 * A failed file operation, with the POSIX error name when there is one.
 *
 * @example
 * ```ts
 * import { FileSystemError } from "./types.ts";
 * const err = new FileSystemError("io", "ENOENT", "/nope", "readFile /nope: no such file");
 * err.errno; // "ENOENT"
 * ```
 */
export class FileSystemError extends Error {
  /** `invalidInput` maps to -32600 on the wire, `io` to -32603. */
  readonly kind: FileSystemErrorKind;
  /** POSIX error name such as `ENOENT`, when known. */
  readonly errno: string | undefined;
  /** The path the operation failed on. */
  readonly path: string;

  /**
   * Describe a failed operation.
   *
   * @param message names the operation and the path
   */
  constructor(kind: FileSystemErrorKind, errno: string | undefined, path: string, message: string) {
    super(message);
    this.name = "FileSystemError";
    this.kind = kind;
    this.errno = errno;
    this.path = path;
  }
}
