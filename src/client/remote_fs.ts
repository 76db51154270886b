/**
 * {@linkcode FileSystem} over the `fs/*` methods of a connected server,
 * throwing the same {@linkcode FileSystemError}s (class, kind, errno,
 * message) as the local implementation does for the same failure.
 *
 * @module
 */
import { base64FieldBytes } from "../protocol/base64.ts";
import { Requests, type RequestType } from "../protocol/descriptors.ts";
import { ErrorCode } from "../protocol/errors.ts";
import type * as types from "../fs/types.ts";
import { FileSystemError } from "../fs/types.ts";
import { refused } from "../fs/errno.ts";
import { checkedPath } from "../fs/paths.ts";
import { checkPlacement, checkRange, MAX_FILE_OFFSET } from "../fs/range.ts";
import { READ_OP, WRITE_OP } from "../fs/stream_target.ts";
import { walkPlan } from "../fs/walk.ts";
import { FsWalk } from "../protocol/walk.ts";
import { fileURLToPath } from "node:url";
import { ServerError } from "./errors.ts";
import { binaryReadParams, dataField } from "./protocol_calls.ts";
import { remoteReadStream } from "./remote_read_stream.ts";
import { remoteWriteStream, type WriteStreamCalls } from "./remote_write_stream.ts";
import {
  type FsSupport,
  fsSupport,
  messageRoomBytes,
  readPieceBytes,
  REMOTE_WINDOW,
  writePieceBytes,
} from "./stream_plan.ts";

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
  /**
   * **[ext]** Any request by its descriptor: the ranged reads, in-place
   * writes and renames go through it. Without it only v0 is used.
   */
  call?<P, R>(type: RequestType<P, R>, params: P): Promise<R>;
  /** **[ext]** What the server announced (`capabilities.fs`, `capabilities.limits`). */
  readonly capabilities?: Record<string, unknown>;
  /** **[ext]** Whether file contents may travel as binary frames. */
  readonly binaryFrames?: boolean;
}

/** Options of {@linkcode RemoteFileSystem}. */
export interface RemoteFileSystemOptions {
  /**
   * Requests one stream keeps in flight (default 4): enough to hide the
   * round trip, few enough to bound memory at `window * chunkBytes`.
   */
  window?: number;
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
  #window: number;

  /**
   * Use `calls` (normally an `ExecServerClient`) for the wire.
   *
   * @throws {RangeError} for a `window` that is not an integer from 1 to 64
   */
  constructor(calls: FsCalls, options: RemoteFileSystemOptions = {}) {
    const window = options.window ?? REMOTE_WINDOW;
    if (!Number.isInteger(window) || window < 1 || window > 64) {
      throw new RangeError(`window must be an integer from 1 to 64, got ${window}`);
    }
    this.#calls = calls;
    this.#window = window;
  }

  /** Read a whole file (`fs/readFile`). */
  readFile(path: string): Promise<Uint8Array> {
    return this.#call("readFile", path, () => this.#calls.fsReadFile(path));
  }

  /**
   * Part of a file (**[ext]** ranged `fs/readFile`). A server without
   * ranged reads sends the whole file, within its read limit, and the part
   * is cut from it here.
   */
  async readRange(
    path: string,
    options: types.ReadRangeOptions = {},
  ): Promise<types.ReadRangeResult> {
    checkPath(READ_OP, path);
    const support = this.#support();
    const range = checkRange(READ_OP, path, options, support.maxReadFileBytes ?? MAX_FILE_OFFSET);
    if (!support.rangedRead || !this.#calls.call) {
      const whole = await this.readFile(path);
      const start = Math.min(range.offset, whole.byteLength);
      const end = Math.min(whole.byteLength, start + (range.length ?? whole.byteLength));
      return {
        data: whole.slice(start, end),
        size: whole.byteLength,
        eof: end >= whole.byteLength,
      };
    }
    return await this.#range(path, range.offset, range.length);
  }

  /**
   * Create or replace a file atomically (`fs/writeFile`); **[ext]** with
   * `append` or `offset`, write into it in place.
   *
   * @throws {FileSystemError} `ENOSYS` for `append` or `offset` when the
   * server does not announce them
   */
  async writeFile(
    path: string,
    data: Uint8Array,
    options: types.WriteFileOptions = {},
  ): Promise<void> {
    checkPath(WRITE_OP, path);
    const placement = checkPlacement(WRITE_OP, path, options);
    if (placement.kind === "replace") {
      return await this.#call(WRITE_OP, path, () => this.#calls.fsWriteFile(path, data));
    }
    const feature = placement.kind === "append" ? "append" : "writeOffset";
    const call = this.#extension(WRITE_OP, path, feature);
    const where = placement.kind === "append" ? { append: true } : { offset: placement.offset };
    await this.#call(WRITE_OP, path, async () => {
      await call(Requests.fsWriteFile, {
        path,
        dataBase64: dataField(data, this.#binary()),
        ...where,
      });
    });
  }

  /**
   * Move a file, symlink or directory (**[ext]** `fs/rename`); errors name
   * the source.
   *
   * @throws {FileSystemError} `ENOSYS` when the server has no `fs/rename`
   */
  async rename(sourcePath: string, destinationPath: string): Promise<void> {
    checkPath("rename", sourcePath);
    checkPath("rename", destinationPath);
    const call = this.#extension("rename", sourcePath, "rename");
    await this.#call("rename", sourcePath, async () => {
      await call(Requests.fsRename, { sourcePath, destinationPath });
    });
  }

  /**
   * A remote file as a stream: pipelined ranged reads of `chunkBytes`
   * (default 512 KiB, at most the server's read limit), `window` of them in
   * flight. A server without ranged reads sends the file in one piece.
   *
   * @throws {RangeError} for a bad `chunkBytes` (other failures error the stream)
   */
  readStream(path: string, options: types.ReadStreamOptions = {}): ReadableStream<Uint8Array> {
    const support = this.#support();
    const ranged = support.rangedRead && this.#calls.call !== undefined;
    return remoteReadStream({
      readRange: ranged ? (offset, length) => this.#range(path, offset, length) : undefined,
      readFile: () => this.readFile(path),
    }, {
      pieceBytes: readPieceBytes(options.chunkBytes, support.maxReadFileBytes),
      window: this.#window,
      check: () => checkPath(READ_OP, path),
    });
  }

  /**
   * A stream that writes a remote file: pipelined positional writes of
   * `chunkBytes` (default 256 KiB, 1 MiB as **[ext]** binary frames; cut to
   * fit the server's message limit) into a temporary file beside it, renamed over it on close. A server
   * without those extensions gets one atomic `fs/writeFile` on close.
   *
   * @throws {RangeError} for a bad `chunkBytes` (other failures error the stream)
   */
  writeStream(path: string, options: types.WriteStreamOptions = {}): WritableStream<Uint8Array> {
    const { maxMessageBytes } = this.#support();
    // The temporary name is longer than the target's by at most ~30 characters.
    const tempLike = `${path}${"x".repeat(64)}`;
    return remoteWriteStream(this.#writeCalls(this.#support()), path, {
      pieceBytes: writePieceBytes(
        options.chunkBytes,
        maxMessageBytes,
        tempLike,
        this.#binary(),
      ),
      window: this.#window,
      maxBufferedBytes: maxMessageBytes === undefined
        ? undefined
        : messageRoomBytes(maxMessageBytes, path),
    });
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

  /**
   * List a tree breadth first within bounds (**[ext]** `fs/walk`, also in
   * the Codex dialect); entry paths come back as paths even from a server
   * that answers `file://` URIs.
   *
   * @throws {FileSystemError} `ENOSYS` when the server has no `fs/walk`
   */
  async walk(path: string, options?: types.WalkOptions): Promise<types.WalkResult> {
    checkPath("walk", path);
    // Every option is sent: the Codex dialect requires them all.
    const plan = walkPlan("walk", path, options);
    const call = this.#calls.call?.bind(this.#calls);
    const noWalk = () =>
      new FileSystemError("io", "ENOSYS", path, `walk ${path}: the server has no fs/walk`);
    if (!call) throw noWalk();
    let result: types.WalkResult;
    try {
      result = await call(FsWalk, { path, options: plan });
    } catch (err) {
      if (err instanceof ServerError && err.code === ErrorCode.MethodNotFound) throw noWalk();
      throw toFileSystemError(err, path);
    }
    const asPath = (p: string) => p.startsWith("file:") ? fileURLToPath(p) : p;
    return {
      entries: result.entries.map((e) => ({ path: asPath(e.path), kind: e.kind })),
      errors: result.errors.map((e) => ({ ...e, path: asPath(e.path) })),
      truncated: result.truncated,
    };
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

  /** Whether file contents may travel as binary frames. */
  #binary(): boolean {
    return this.#calls.binaryFrames === true;
  }

  #support(): FsSupport {
    return fsSupport(this.#calls.capabilities);
  }

  /** The generic call, when the server announced `feature`; else an `ENOSYS` failure. */
  #extension(
    op: string,
    path: string,
    feature: "append" | "writeOffset" | "rename",
  ): NonNullable<FsCalls["call"]> {
    const call = this.#calls.call?.bind(this.#calls);
    if (!call || !this.#support()[feature]) {
      throw new FileSystemError(
        "io",
        "ENOSYS",
        path,
        `${op} ${path}: the server does not support this (capabilities.fs.${feature})`,
      );
    }
    return call;
  }

  /** One ranged `fs/readFile`, decoded. */
  #range(path: string, offset: number, length?: number): Promise<types.ReadRangeResult> {
    const call = this.#calls.call!.bind(this.#calls);
    return this.#call(READ_OP, path, async () => {
      const binary = binaryReadParams(this.#binary());
      const r = await call(Requests.fsReadFile, { path, offset, length, ...binary });
      const data = base64FieldBytes(r.dataBase64);
      const size = typeof r.size === "number" ? r.size : offset + data.byteLength;
      return { data, size, eof: r.eof ?? offset + data.byteLength >= size };
    });
  }

  /** What a write stream sends, each failure a FileSystemError naming its path. */
  #writeCalls(support: FsSupport): WriteStreamCalls {
    const call = this.#calls.call?.bind(this.#calls);
    return {
      describe: (target) =>
        this.#call(WRITE_OP, target, () => this.#calls.fsGetMetadata(target)).catch((err) => {
          if (err instanceof FileSystemError && err.errno === "ENOENT") return undefined;
          throw err;
        }),
      writeAt: call && support.writeOffset
        ? (path, data, offset) => {
          // Encoded (or, as a binary frame, copied) before the caller may
          // reuse the buffer: the request is sent before the call returns.
          const dataBase64 = dataField(data, this.#binary());
          return this.#call(WRITE_OP, path, async () => {
            await call(Requests.fsWriteFile, { path, dataBase64, offset });
          });
        }
        : undefined,
      rename: call && support.rename
        ? (source, destination) =>
          this.#call("rename", source, async () => {
            await call(Requests.fsRename, { sourcePath: source, destinationPath: destination });
          })
        : undefined,
      remove: (path) =>
        this.#call("remove", path, () => this.#calls.fsRemove(path, { recursive: false })),
      writeFile: (target, data) =>
        this.#call(WRITE_OP, target, () => this.#calls.fsWriteFile(target, data)),
    };
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
