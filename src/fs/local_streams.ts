/**
 * `readStream` and `writeStream` of the local filesystem: large positional
 * reads and writes on one open file, never the whole file in memory.
 *
 * @module
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { writeAll } from "../runtime/file_write.ts";
import { writeBehind } from "../runtime/write_behind.ts";
import { checkChunkBytes, Chunker, DEFAULT_CHUNK_BYTES } from "./chunker.ts";
import { orOsError, osError } from "./errno.ts";
import { checkedPath } from "./paths.ts";
import { type OpenedFile, openRegularFile } from "./ranged_read.ts";
import { renamePath } from "./rename.ts";
import { statOrUndefined } from "./stat.ts";
import {
  asTargetError,
  partialName,
  READ_OP,
  refuseUnreplaceable,
  WRITE_OP,
  writeStreamTarget,
} from "./stream_target.ts";
import type { ReadStreamOptions, WriteStreamOptions } from "./types.ts";

/**
 * The bytes of the regular file at `path`, in chunks of at most
 * `chunkBytes` (default 1 MiB), one chunk read ahead of the consumer. The
 * file is opened at once; a failure (missing file, directory, fifo, bad
 * path) errors the stream with the `FileSystemError` `readFile` throws.
 * Read it to the end or cancel it: either closes the file.
 *
 * @throws {RangeError} for a bad `chunkBytes`
 *
 * @example
 * ```ts
 * import { localReadStream } from "./local_streams.ts";
 * let total = 0;
 * for await (const chunk of localReadStream("/etc/hostname")) total += chunk.byteLength;
 * ```
 */
export function localReadStream(
  path: string,
  options: ReadStreamOptions = {},
): ReadableStream<Uint8Array> {
  const chunkBytes = checkChunkBytes(options.chunkBytes, DEFAULT_CHUNK_BYTES);
  let opened: OpenedFile | undefined;
  let target = path;
  let position = 0;
  const close = async (): Promise<void> => {
    const handle = opened?.handle;
    opened = undefined;
    await handle?.close().catch(() => {});
  };
  return new ReadableStream<Uint8Array>({
    start: async () => {
      target = checkedPath(READ_OP, path);
      opened = await openRegularFile(READ_OP, target);
    },
    pull: async (controller) => {
      try {
        const buffer = new Uint8Array(chunkBytes);
        const { bytesRead } = await opened!.handle.read(buffer, 0, chunkBytes, position);
        if (bytesRead === 0) {
          await close();
          controller.close();
          return;
        }
        position += bytesRead;
        // A short piece is copied out so the full-size buffer is not kept alive.
        controller.enqueue(bytesRead === chunkBytes ? buffer : buffer.slice(0, bytesRead));
      } catch (err) {
        await close();
        throw osError(READ_OP, target, err);
      }
    },
    cancel: close,
  }, { highWaterMark: 1 });
}

/** The state of one local write stream. */
interface LocalUpload {
  target: string;
  temp: string | undefined;
  handle: fsp.FileHandle | undefined;
  position: number;
}

/** Write all of `piece` at the upload's position, then behind it (write_behind.ts). */
async function writePiece(upload: LocalUpload, piece: Uint8Array): Promise<void> {
  await writeAll(upload.handle!, piece, upload.position);
  await writeBehind(upload.handle!.fd, upload.position, piece.byteLength);
  upload.position += piece.byteLength;
}

/** Close and remove the temporary file, best effort (an abort or a failure). */
async function discard(upload: LocalUpload): Promise<void> {
  const { handle, temp } = upload;
  upload.handle = undefined;
  upload.temp = undefined;
  await handle?.close().catch(() => {});
  if (temp) await fsp.unlink(temp).catch(() => {});
}

/** Refuse the target if it cannot be replaced, then create the temporary file. */
async function openUpload(path: string): Promise<LocalUpload> {
  const target = writeStreamTarget(path);
  const st = await orOsError(WRITE_OP, target, () => statOrUndefined(target));
  refuseUnreplaceable(target, st && { isDirectory: st.isDirectory(), isFile: st.isFile() });
  const temp = partialName(target);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  const handle = await orOsError(WRITE_OP, target, () => fsp.open(temp, flags, 0o666));
  return { target, temp, handle, position: 0 };
}

/**
 * A stream that writes the file at `path`: the bytes go to a hidden
 * temporary file beside it (`.NAME.RANDOM.partial`, mode 0666 minus
 * umask), in pieces of `chunkBytes` (default 1 MiB); on close the file is
 * fsynced and renamed over `path`, so readers see the old file or the
 * complete new one. Aborting, or any failure, removes the temporary file
 * and leaves `path` as it was.
 *
 * Unlike `writeFile`, the new file does not take over the old one's mode
 * or owner, and a symlink at `path` is replaced by the file rather than
 * written through. A directory is refused with `EISDIR`, a fifo, socket or
 * device with `EINVAL`, before any byte is taken. Failures are
 * `FileSystemError`s naming `path`, never the temporary file.
 *
 * @throws {RangeError} for a bad `chunkBytes`
 *
 * @example
 * ```ts
 * import { localReadStream, localWriteStream } from "./local_streams.ts";
 * await localReadStream("/etc/hostname").pipeTo(localWriteStream("/tmp/hostname.copy"));
 * ```
 */
export function localWriteStream(
  path: string,
  options: WriteStreamOptions = {},
): WritableStream<Uint8Array> {
  const chunker = new Chunker(checkChunkBytes(options.chunkBytes, DEFAULT_CHUNK_BYTES));
  let upload: LocalUpload | undefined;
  const failed = async (err: unknown): Promise<unknown> => {
    const target = upload?.target ?? path;
    if (upload) await discard(upload);
    // A chunk that is not bytes is the caller's mistake, not the disk's.
    if (err instanceof TypeError) return err;
    return asTargetError(osError(WRITE_OP, target, err), target);
  };
  return new WritableStream<Uint8Array>({
    start: async () => {
      upload = await openUpload(path);
    },
    write: async (chunk) => {
      try {
        for (const piece of chunker.push(chunk)) await writePiece(upload!, piece);
      } catch (err) {
        throw await failed(err);
      }
    },
    close: async () => {
      try {
        await writePiece(upload!, chunker.flush());
        await upload!.handle!.sync();
        await upload!.handle!.close();
        upload!.handle = undefined;
        await renamePath(upload!.temp!, upload!.target);
        upload!.temp = undefined;
      } catch (err) {
        throw await failed(err);
      }
    },
    abort: async () => {
      if (upload) await discard(upload);
    },
  });
}
