/**
 * The filesystem contract shared by the server's local implementation and
 * the client's remote one, so code written against it runs unchanged on
 * either side.
 *
 * @module
 */

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

/**
 * File operations with the exec-server.v0 semantics. Paths are absolute
 * (or `file://` URIs); failures throw {@linkcode FileSystemError}.
 */
export interface FileSystem {
  /** Read a whole file. */
  readFile(path: string): Promise<Uint8Array>;
  /** Create or replace a file atomically. */
  writeFile(path: string, data: Uint8Array): Promise<void>;
  /** Create a directory. */
  createDirectory(path: string, options?: CreateDirectoryOptions): Promise<void>;
  /** Describe a path. */
  getMetadata(path: string): Promise<FileMetadata>;
  /** List a directory. */
  readDirectory(path: string): Promise<DirectoryEntry[]>;
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
