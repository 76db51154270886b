/**
 * Every protocol method as a typed call with bytes as `Uint8Array`, built
 * on one generic `call(descriptor, params)`: the shapes come from the
 * protocol's descriptors, which the server's handlers are typed by too.
 *
 * @module
 */
import { base64FieldBytes, Base64Part, decodeBase64, encodeBase64 } from "../protocol/base64.ts";
import { Requests, type RequestType } from "../protocol/descriptors.ts";
import { ErrorCode } from "../protocol/errors.ts";
import type { ProcessStartParams, TerminalSize } from "../protocol/methods.ts";
import type {
  CopyOptions,
  CreateDirectoryOptions,
  DirectoryEntry,
  FileMetadata,
  RemoveOptions,
} from "../fs/types.ts";
import { ServerError } from "./errors.ts";
import type { DecodedReadResult, ProcessReadOptions } from "./options.ts";
import { FileHandleRequests, type FsOpenMode } from "../protocol/file_handles.ts";
import { HttpRequest, type HttpRequestParams } from "../protocol/http_request.ts";

const encoder = new TextEncoder();

/** The largest stdin chunk sent in one `process/write`. */
const WRITE_CHUNK_BYTES = 4 * 1024 * 1024;

/** Text as UTF-8; bytes as they are. */
export function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? encoder.encode(data) : data;
}

/**
 * `bytes` as the `dataBase64` of a request: a binary frame's payload where
 * `binaryFrames` allows, else base64 (encoded now, so the caller may reuse
 * the buffer once the call was made; transports copy a payload when it is
 * sent).
 */
export function dataField(bytes: Uint8Array, binaryFrames: boolean): string | Base64Part {
  return binaryFrames ? new Base64Part(bytes, { binaryFrame: true }) : encodeBase64(bytes);
}

/** The `fs/readFile` params that ask for the bytes as a binary frame, where allowed. */
export function binaryReadParams(binaryFrames: boolean): { binaryFrame?: true } {
  return binaryFrames ? { binaryFrame: true } : {};
}

/**
 * The session dialect answers a refused write with a status instead of an
 * error; it becomes the error a v0 server would have sent.
 */
function refusedWrite(processId: string, result: unknown): void {
  const status = (result as { status?: unknown } | null)?.status;
  if (status === undefined || status === "accepted") return;
  throw new ServerError(Requests.processWrite.method, {
    code: ErrorCode.InvalidRequest,
    message: status === "unknownProcess"
      ? `unknown process id ${processId}`
      : `stdin of process ${processId} is closed`,
  });
}

/**
 * The typed calls of a connected client. Subclasses provide the transport
 * (`call`) and what the server announced (`capabilities`).
 */
export abstract class ProtocolCalls {
  /** Send one request described by `type` and resolve with its typed result. */
  abstract call<P, R>(type: RequestType<P, R>, params: P): Promise<R>;

  /** The extensions the server announced. */
  abstract get capabilities(): Record<string, unknown>;

  /**
   * **[ext]** Whether file contents travel as binary frames: the
   * connection carries them, the server announced them, the options allow.
   */
  abstract get binaryFrames(): boolean;

  // -- process/* ----------------------------------------------------------

  /** `process/start` as on the wire. Prefer `spawn`, which never misses output. */
  async processStart(params: ProcessStartParams): Promise<{ processId: string }> {
    return await this.call(Requests.processStart, params);
  }

  /** `process/read`: retained output after `afterSeq`. */
  async processRead(
    processId: string,
    options: ProcessReadOptions = {},
  ): Promise<DecodedReadResult> {
    const r = await this.call(Requests.processRead, { processId, ...options });
    return {
      chunks: r.chunks.map((c) => ({ seq: c.seq, stream: c.stream, data: decodeBase64(c.chunk) })),
      nextSeq: r.nextSeq,
      exited: r.exited,
      exitCode: r.exitCode,
      signal: r.signal,
      durationMs: r.durationMs,
      evicted: r.evicted,
    };
  }

  /**
   * `process/write`: bytes (or UTF-8 text) to a process's stdin. Large data
   * goes as several requests of at most 4 MiB, in order: one huge message
   * could exceed the server's message limit, whose refusal cannot name the
   * request it belonged to.
   */
  async processWrite(processId: string, data: Uint8Array | string): Promise<void> {
    const bytes = toBytes(data);
    if (bytes.length === 0) {
      refusedWrite(processId, await this.call(Requests.processWrite, { processId, chunk: "" }));
      return;
    }
    // Smaller pieces when the server announced a smaller message limit.
    const limit = this.announcedMessageLimit();
    const step = limit === undefined
      ? WRITE_CHUNK_BYTES
      : Math.max(1, Math.min(WRITE_CHUNK_BYTES, Math.floor((limit - 1024) / 4) * 3));
    for (let at = 0; at < bytes.length; at += step) {
      const chunk = encodeBase64(bytes.subarray(at, at + step));
      refusedWrite(processId, await this.call(Requests.processWrite, { processId, chunk }));
    }
  }

  /** The server's `capabilities.limits.maxMessageBytes`, when it announced one. */
  protected announcedMessageLimit(): number | undefined {
    const limits = this.capabilities.limits as { maxMessageBytes?: unknown } | undefined;
    const limit = limits?.maxMessageBytes;
    return typeof limit === "number" && limit > 1024 ? limit : undefined;
  }

  /** `process/terminate`: resolves to whether the process was running. */
  async processTerminate(processId: string, options: { graceMs?: number } = {}): Promise<boolean> {
    const params = options.graceMs === undefined
      ? { processId }
      : { processId, graceMs: options.graceMs };
    return (await this.call(Requests.processTerminate, params)).running;
  }

  /** `process/closeStdin`. */
  async processCloseStdin(processId: string): Promise<void> {
    await this.call(Requests.processCloseStdin, { processId });
  }

  /** `process/resize`. */
  async processResize(processId: string, size: TerminalSize): Promise<void> {
    await this.call(Requests.processResize, { processId, rows: size.rows, cols: size.cols });
  }

  /** `process/signal`: resolves to the signal's canonical name. */
  async processSignal(processId: string, signal: string): Promise<string> {
    // A plain v0 server answers `{}`: the name as sent is all there is.
    const r: { signal?: string } = await this.call(Requests.processSignal, { processId, signal });
    return r.signal ?? signal;
  }

  // -- fs/* (errors are ServerError; `client.fs` gives FileSystemError) ----

  /** `fs/readFile`. */
  async fsReadFile(path: string): Promise<Uint8Array> {
    const params = { path, ...binaryReadParams(this.binaryFrames) };
    return base64FieldBytes((await this.call(Requests.fsReadFile, params)).dataBase64);
  }

  /**
   * `fs/writeFile`: create or truncate.
   *
   * @throws {ServerError} with code -32600 and errno `EFBIG`, before
   *   anything is sent, when the message would exceed the server's announced
   *   `maxMessageBytes` (the server could not say which request it refused)
   */
  async fsWriteFile(path: string, data: Uint8Array | string): Promise<void> {
    const bytes = toBytes(data);
    const limit = this.announcedMessageLimit();
    // base64 plus the JSON around it, with room for a long path.
    const estimate = Math.ceil(bytes.length / 3) * 4 + path.length * 6 + 256;
    if (limit !== undefined && estimate > limit) {
      throw new ServerError(Requests.fsWriteFile.method, {
        code: ErrorCode.InvalidRequest,
        message: `${path}: ${bytes.length} bytes make a ${estimate}-byte message, over the ` +
          `server's limit of ${limit} bytes (--max-message-bytes); write it in parts or through a process`,
        data: { errno: "EFBIG" },
      });
    }
    await this.call(Requests.fsWriteFile, {
      path,
      dataBase64: dataField(bytes, this.binaryFrames),
    });
  }

  /** `fs/createDirectory` (`recursive` defaults to true on the server). */
  async fsCreateDirectory(path: string, options: CreateDirectoryOptions = {}): Promise<void> {
    await this.call(Requests.fsCreateDirectory, { path, ...options });
  }

  /** `fs/getMetadata`. */
  async fsGetMetadata(path: string): Promise<FileMetadata> {
    const r = await this.call(Requests.fsGetMetadata, { path });
    return {
      isDirectory: r.isDirectory,
      isFile: r.isFile,
      createdAtMs: r.createdAtMs,
      modifiedAtMs: r.modifiedAtMs,
    };
  }

  /** `fs/readDirectory`. */
  async fsReadDirectory(path: string): Promise<DirectoryEntry[]> {
    const r = await this.call(Requests.fsReadDirectory, { path });
    return r.entries.map((e) => ({
      fileName: e.fileName,
      isDirectory: e.isDirectory,
      isFile: e.isFile,
    }));
  }

  /** `fs/remove` (`recursive` and `force` default to true on the server). */
  async fsRemove(path: string, options: RemoveOptions = {}): Promise<void> {
    await this.call(Requests.fsRemove, { path, ...options });
  }

  /** `fs/copy` (`recursive` defaults to false). */
  async fsCopy(
    sourcePath: string,
    destinationPath: string,
    options: CopyOptions = {},
  ): Promise<void> {
    await this.call(Requests.fsCopy, { sourcePath, destinationPath, ...options });
  }

  // -- [ext] file handles and http/request ------------------------------------

  /** `fs/open`: a handle for block reads (`read`) or a replacement (`replace`). */
  async fsOpen(handleId: string, path: string, mode: FsOpenMode = "read"): Promise<void> {
    await this.call(FileHandleRequests.fsOpen, { handleId, path, mode });
  }

  /** `fs/readBlock`: at most `len` bytes (1 MiB) from `offset`; `eof` when fewer were left. */
  async fsReadBlock(
    handleId: string,
    offset: number,
    len: number,
  ): Promise<{ data: Uint8Array; eof: boolean }> {
    const r = await this.call(FileHandleRequests.fsReadBlock, { handleId, offset, len });
    return { data: decodeBase64(r.chunk), eof: r.eof };
  }

  /**
   * `fs/writeBlock`: at most 1 MiB at `offset` of a `replace` handle; `eof`
   * makes it the last, and the file replaces its target now.
   */
  async fsWriteBlock(
    handleId: string,
    offset: number,
    data: Uint8Array,
    options: { eof?: boolean } = {},
  ): Promise<void> {
    const chunk = encodeBase64(data);
    await this.call(FileHandleRequests.fsWriteBlock, { handleId, offset, chunk, ...options });
  }

  /** `fs/close`: a `replace` handle's file replaces its target. */
  async fsClose(handleId: string): Promise<void> {
    await this.call(FileHandleRequests.fsClose, { handleId });
  }

  /**
   * `http/request`, buffered: made from the server's host and network, the
   * whole body in the answer (at most the server's read limit).
   */
  async httpRequest(
    params: Omit<HttpRequestParams, "streamResponse" | "bodyBase64"> & { body?: Uint8Array },
  ): Promise<{ status: number; headers: { name: string; value: string }[]; body: Uint8Array }> {
    const { body, ...rest } = params;
    const r = await this.call(HttpRequest, {
      ...rest,
      ...(body ? { bodyBase64: encodeBase64(body) } : {}),
      streamResponse: false,
    });
    return { status: r.status, headers: r.headers, body: decodeBase64(r.bodyBase64) };
  }
}
