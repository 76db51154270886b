/**
 * {@linkcode FileSystem} over the `fs/*` methods of a connected server,
 * throwing the same {@linkcode FileSystemError}s (class, kind, errno,
 * message) as the local implementation does for the same failure.
 *
 * @module
 */
import { ErrorCode } from "../protocol/errors.ts";
import type * as types from "../fs/types.ts";
import { FileSystemError } from "../fs/types.ts";
import { refused } from "../fs/errno.ts";
import { checkedPath } from "../fs/paths.ts";
import { ServerError } from "./errors.ts";

/** The typed `fs/*` calls {@linkcode RemoteFileSystem} is built on (an `ExecServerClient`). */
export interface FsCalls {
  /** `fs/readFile`. */
  fsReadFile(path: string): Promise<Uint8Array>;
  /** `fs/writeFile`. */
  fsWriteFile(path: string, data: Uint8Array): Promise<void>;
  /** `fs/createDirectory`. */
  fsCreateDirectory(path: string, options?: types.CreateDirectoryOptions): Promise<void>;
  /** `fs/getMetadata`. */
  fsGetMetadata(path: string): Promise<types.FileMetadata>;
  /** `fs/readDirectory`. */
  fsReadDirectory(path: string): Promise<types.DirectoryEntry[]>;
  /** `fs/remove`. */
  fsRemove(path: string, options?: types.RemoveOptions): Promise<void>;
  /** `fs/copy`. */
  fsCopy(sourcePath: string, destinationPath: string, options?: types.CopyOptions): Promise<void>;
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
 * refuse it with a differently worded -32602). A value starting with
 * `file:` (in lower case only) is left for the server to judge.
 */
function checkPath(op: string, path: string): void {
  if (typeof path !== "string") {
    throw refused(op, String(path), "EINVAL", "path must be a string");
  }
  if (path.startsWith("file:")) return;
  checkedPath(op, path, { fileUris: false });
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
export class RemoteFileSystem implements types.FileSystem {
  #calls: FsCalls;

  /** Use `calls` (normally an `ExecServerClient`) for the wire. */
  constructor(calls: FsCalls) {
    this.#calls = calls;
  }

  /** Read a whole file (`fs/readFile`). */
  readFile(path: string): Promise<Uint8Array> {
    return this.#call("readFile", path, () => this.#calls.fsReadFile(path));
  }

  /** Create or replace a file atomically (`fs/writeFile`). */
  writeFile(path: string, data: Uint8Array): Promise<void> {
    return this.#call("writeFile", path, () => this.#calls.fsWriteFile(path, data));
  }

  /** Create a directory (`fs/createDirectory`). */
  createDirectory(path: string, options?: types.CreateDirectoryOptions): Promise<void> {
    return this.#call("createDirectory", path, () => this.#calls.fsCreateDirectory(path, options));
  }

  /** Describe a path (`fs/getMetadata`). */
  getMetadata(path: string): Promise<types.FileMetadata> {
    return this.#call("getMetadata", path, () => this.#calls.fsGetMetadata(path));
  }

  /** List a directory (`fs/readDirectory`). */
  readDirectory(path: string): Promise<types.DirectoryEntry[]> {
    return this.#call("readDirectory", path, () => this.#calls.fsReadDirectory(path));
  }

  /** Remove a file or directory (`fs/remove`). */
  remove(path: string, options?: types.RemoveOptions): Promise<void> {
    return this.#call("remove", path, () => this.#calls.fsRemove(path, options));
  }

  /** Copy a file, symlink or directory (`fs/copy`); errors name the source. */
  async copy(
    sourcePath: string,
    destinationPath: string,
    options?: types.CopyOptions,
  ): Promise<void> {
    checkPath("copy", sourcePath);
    checkPath("copy", destinationPath);
    try {
      await this.#calls.fsCopy(sourcePath, destinationPath, options);
    } catch (err) {
      throw toFileSystemError(err, sourcePath);
    }
  }

  /** Check `path`, then make the call, its server errors turned into FileSystemErrors. */
  async #call<T>(op: string, path: string, call: () => Promise<T>): Promise<T> {
    checkPath(op, path);
    try {
      return await call();
    } catch (err) {
      throw toFileSystemError(err, path);
    }
  }
}
