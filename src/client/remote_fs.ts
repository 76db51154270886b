/**
 * {@linkcode FileSystem} over the `fs/*` methods of a connected server,
 * throwing the same {@linkcode FileSystemError}s (class, kind, errno,
 * message) as the local implementation does for the same failure.
 *
 * @module
 */
import { ErrorCode } from "../protocol/errors.ts";
import {
  type CopyOptions,
  type CreateDirectoryOptions,
  type DirectoryEntry,
  type FileMetadata,
  type FileSystem,
  FileSystemError,
  type RemoveOptions,
} from "../fs/types.ts";
import { ServerError } from "./errors.ts";

/** The typed `fs/*` calls {@linkcode RemoteFileSystem} is built on (an `ExecServerClient`). */
export interface FsCalls {
  /** `fs/readFile`. */
  fsReadFile(path: string): Promise<Uint8Array>;
  /** `fs/writeFile`. */
  fsWriteFile(path: string, data: Uint8Array): Promise<void>;
  /** `fs/createDirectory`. */
  fsCreateDirectory(path: string, options?: CreateDirectoryOptions): Promise<void>;
  /** `fs/getMetadata`. */
  fsGetMetadata(path: string): Promise<FileMetadata>;
  /** `fs/readDirectory`. */
  fsReadDirectory(path: string): Promise<DirectoryEntry[]>;
  /** `fs/remove`. */
  fsRemove(path: string, options?: RemoveOptions): Promise<void>;
  /** `fs/copy`. */
  fsCopy(sourcePath: string, destinationPath: string, options?: CopyOptions): Promise<void>;
}

/**
 * Turn a server's error into the {@linkcode FileSystemError} the local
 * implementation would have thrown: -32600 and -32602 are `invalidInput`
 * (-32602, a parameter the server refused, has errno `EINVAL` when the
 * server named none), everything else is `io`. Other errors (a closed
 * connection) pass through unchanged.
 */
export function toFileSystemError(err: unknown, path: string): unknown {
  if (!(err instanceof ServerError)) return err;
  const invalid = err.code === ErrorCode.InvalidRequest || err.code === ErrorCode.InvalidParams;
  const errno = err.errno ?? (err.code === ErrorCode.InvalidParams ? "EINVAL" : undefined);
  return new FileSystemError(invalid ? "invalidInput" : "io", errno, path, err.serverMessage);
}

/**
 * Paths are checked here exactly as the local implementation checks them,
 * so a relative path fails the same way on both sides (the server would
 * refuse it with a differently worded -32602).
 */
function checkPath(op: string, path: string): void {
  if (typeof path !== "string") {
    throw new FileSystemError(
      "invalidInput",
      "EINVAL",
      String(path),
      `${op} ${String(path)}: path must be a string`,
    );
  }
  if (path.startsWith("file:")) return;
  if (!path.startsWith("/")) {
    throw new FileSystemError(
      "invalidInput",
      "EINVAL",
      path,
      `${op} ${path}: path must be absolute`,
    );
  }
  if (path.includes("\0")) {
    throw new FileSystemError(
      "invalidInput",
      "EINVAL",
      path,
      `${op} ${path}: path must not contain NUL`,
    );
  }
}

/**
 * The filesystem of the host a client is connected to.
 *
 * @example
 * ```ts
 * import { connectInProcess } from "../../mod.ts";
 * const client = await connectInProcess();
 * await client.fs.writeFile("/tmp/hello.txt", new TextEncoder().encode("hi"));
 * await client.fs.readFile("/tmp/hello.txt"); // Uint8Array [104, 105]
 * await client.close();
 * ```
 */
export class RemoteFileSystem implements FileSystem {
  #calls: FsCalls;

  /** Use `calls` (normally an `ExecServerClient`) for the wire. */
  constructor(calls: FsCalls) {
    this.#calls = calls;
  }

  async readFile(path: string): Promise<Uint8Array> {
    checkPath("readFile", path);
    try {
      return await this.#calls.fsReadFile(path);
    } catch (err) {
      throw toFileSystemError(err, path);
    }
  }

  async writeFile(path: string, data: Uint8Array): Promise<void> {
    checkPath("writeFile", path);
    try {
      await this.#calls.fsWriteFile(path, data);
    } catch (err) {
      throw toFileSystemError(err, path);
    }
  }

  async createDirectory(path: string, options?: CreateDirectoryOptions): Promise<void> {
    checkPath("createDirectory", path);
    try {
      await this.#calls.fsCreateDirectory(path, options);
    } catch (err) {
      throw toFileSystemError(err, path);
    }
  }

  async getMetadata(path: string): Promise<FileMetadata> {
    checkPath("getMetadata", path);
    try {
      return await this.#calls.fsGetMetadata(path);
    } catch (err) {
      throw toFileSystemError(err, path);
    }
  }

  async readDirectory(path: string): Promise<DirectoryEntry[]> {
    checkPath("readDirectory", path);
    try {
      return await this.#calls.fsReadDirectory(path);
    } catch (err) {
      throw toFileSystemError(err, path);
    }
  }

  async remove(path: string, options?: RemoveOptions): Promise<void> {
    checkPath("remove", path);
    try {
      await this.#calls.fsRemove(path, options);
    } catch (err) {
      throw toFileSystemError(err, path);
    }
  }

  async copy(sourcePath: string, destinationPath: string, options?: CopyOptions): Promise<void> {
    checkPath("copy", sourcePath);
    checkPath("copy", destinationPath);
    try {
      await this.#calls.fsCopy(sourcePath, destinationPath, options);
    } catch (err) {
      throw toFileSystemError(err, sourcePath);
    }
  }
}
