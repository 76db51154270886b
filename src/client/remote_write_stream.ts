/**
 * `writeStream` of the remote filesystem: pipelined positional
 * `fs/writeFile` requests into a temporary file beside the target, then
 * one `fs/rename` over it.
 *
 * @module
 */
import { Chunker, requireBytes } from "../fs/chunker.ts";
import { refused } from "../fs/errno.ts";
import {
  asTargetError,
  partialName,
  refuseUnreplaceable,
  WRITE_OP,
  writeStreamTarget,
} from "../fs/stream_target.ts";

/** The calls a remote write stream makes; they throw `FileSystemError`s. */
export interface WriteStreamCalls {
  /** What the target leads to (symlinks followed); undefined when nothing is there. */
  describe(target: string): Promise<{ isDirectory: boolean; isFile: boolean } | undefined>;
  /**
   * A positional `fs/writeFile`, or undefined when the server has none. It
   * must take (encode or copy) `data` before it returns: the stream hands
   * it views of the producer's buffers, which may be reused afterwards.
   */
  writeAt: ((path: string, data: Uint8Array, offset: number) => Promise<void>) | undefined;
  /** `fs/rename`, or undefined when the server has none. */
  rename: ((source: string, destination: string) => Promise<void>) | undefined;
  /** `fs/remove` of one file, a missing one being fine. */
  remove(path: string): Promise<void>;
  /** A whole, atomic `fs/writeFile` (for a server without the extensions). */
  writeFile(target: string, data: Uint8Array): Promise<void>;
}

/** Sizes of a remote write stream. */
export interface RemoteWriteOptions {
  /** Bytes per positional write. */
  pieceBytes: number;
  /** Positional writes in flight at most. */
  window: number;
  /** Without the extensions: the most bytes buffered for the one `fs/writeFile`. */
  maxBufferedBytes: number | undefined;
}

/** The uploads in flight of one stream, in the order they were sent. */
class Uploads {
  readonly #inFlight: Promise<void>[] = [];
  #failure: { error: unknown } | undefined;

  /** Track `answer`, remembering the first failure among those in flight. */
  add(answer: Promise<void>): void {
    answer.catch((error) => this.#failure ??= { error });
    this.#inFlight.push(answer);
  }

  /** Throw the first failure seen so far, if any. */
  check(): void {
    if (this.#failure) throw this.#failure.error;
  }

  /** Wait until fewer than `limit` are in flight (oldest first); throws a failure. */
  async drainTo(limit: number): Promise<void> {
    while (this.#inFlight.length > limit) await this.#inFlight.shift();
    this.check();
  }

  /** Wait for every one to settle, whatever the outcome (before removing the file). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.#inFlight.splice(0));
  }
}

/** What the target is now, a failure reported as the stream's. */
async function describeTarget(
  calls: WriteStreamCalls,
  target: string,
): Promise<{ isDirectory: boolean; isFile: boolean } | undefined> {
  try {
    return await calls.describe(target);
  } catch (err) {
    throw asTargetError(err, target);
  }
}

/** A stream that buffers everything for one atomic `fs/writeFile` on close. */
function bufferedWriteStream(
  calls: WriteStreamCalls,
  path: string,
  maxBufferedBytes: number | undefined,
): WritableStream<Uint8Array> {
  let target = path;
  const parts: Uint8Array[] = [];
  let total = 0;
  return new WritableStream<Uint8Array>({
    start: async () => {
      target = writeStreamTarget(path);
      refuseUnreplaceable(target, await describeTarget(calls, target));
    },
    write: (chunk) => {
      requireBytes(chunk);
      total += chunk.byteLength;
      if (maxBufferedBytes !== undefined && total > maxBufferedBytes) {
        parts.length = 0;
        throw refused(
          WRITE_OP,
          target,
          "EFBIG",
          `${total} bytes do not fit in one message to a server without streaming ` +
            `(capabilities.fs); its limit allows ${maxBufferedBytes}`,
        );
      }
      parts.push(chunk.slice());
    },
    close: async () => {
      const all = new Uint8Array(total);
      let at = 0;
      for (const part of parts.splice(0)) {
        all.set(part, at);
        at += part.byteLength;
      }
      await calls.writeFile(target, all);
    },
    abort: () => {
      parts.length = 0;
    },
  });
}

/**
 * A stream that writes the remote file at `path`. The bytes are cut into
 * pieces of `pieceBytes` and sent as positional `fs/writeFile` requests
 * into a hidden temporary file beside the target, up to `window` at a
 * time; each carries its own offset, so the server may run them in any
 * order. On close, once every piece is written, `fs/rename` moves the file
 * over the target. An abort or any failure waits for the requests in
 * flight, then removes the temporary file (best effort: a connection that
 * is gone cannot remove it). A server without the extensions gets one
 * atomic `fs/writeFile` of everything, buffered until close.
 *
 * @example
 * ```ts
 * import { remoteWriteStream, type WriteStreamCalls } from "./remote_write_stream.ts";
 * declare const calls: WriteStreamCalls;
 * const stream = remoteWriteStream(calls, "/srv/big.bin", {
 *   pieceBytes: 4 << 20,
 *   window: 4,
 *   maxBufferedBytes: undefined,
 * });
 * await new Blob([new Uint8Array(10 << 20)]).stream().pipeTo(stream);
 * ```
 */
export function remoteWriteStream(
  calls: WriteStreamCalls,
  path: string,
  options: RemoteWriteOptions,
): WritableStream<Uint8Array> {
  const { writeAt, rename } = calls;
  if (!writeAt || !rename) return bufferedWriteStream(calls, path, options.maxBufferedBytes);
  const chunker = new Chunker(options.pieceBytes);
  const uploads = new Uploads();
  let target = path;
  let temp: string | undefined;
  let offset = 0;
  /** Clean up after a failure and turn it into the target's error. */
  const failed = async (err: unknown): Promise<unknown> => {
    await uploads.settle();
    if (temp) await calls.remove(temp).catch(() => {});
    temp = undefined;
    return asTargetError(err, target);
  };
  const send = (piece: Uint8Array): void => {
    // The piece is encoded (or, as a binary frame, copied) before writeAt
    // returns, so the caller's buffer behind it may be reused as soon as
    // write() resolves.
    uploads.add(writeAt(temp!, piece, offset));
    offset += piece.byteLength;
  };
  return new WritableStream<Uint8Array>({
    start: async () => {
      target = writeStreamTarget(path);
      refuseUnreplaceable(target, await describeTarget(calls, target));
      const name = partialName(target);
      // Created empty first, so a missing or read-only directory fails here.
      await writeAt(name, new Uint8Array(0), 0).catch((e) => {
        throw asTargetError(e, target);
      });
      temp = name;
    },
    write: async (chunk) => {
      try {
        uploads.check();
        for (const piece of chunker.push(chunk)) {
          send(piece);
          await uploads.drainTo(options.window - 1);
        }
      } catch (err) {
        throw await failed(err);
      }
    },
    close: async () => {
      try {
        const rest = chunker.flush();
        if (rest.byteLength > 0) send(rest);
        await uploads.drainTo(0);
        await rename(temp!, target);
        temp = undefined;
      } catch (err) {
        throw await failed(err);
      }
    },
    abort: async () => {
      await failed(undefined);
    },
  });
}
