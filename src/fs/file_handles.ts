/**
 * A session's open file handles (`fs/open` and its blocks): bounded in
 * number and in the bytes its block reads and writes hold at once. A
 * `read` handle is a file descriptor of a regular file; a `replace` handle
 * writes a temporary file beside the target (`.NAME.RANDOM.partial`) that
 * replaces it, atomically and with the old file's mode, when the handle is
 * committed. Discarding a handle (the session ended, or a failed commit)
 * removes the temporary file, so an abandoned handle leaves no trace.
 *
 * @module
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { writeAll } from "../runtime/file_write.ts";
import { ByteBudget } from "../util/byte_budget.ts";
import {
  abandonReplacement,
  commitReplacement,
  openReplacement,
  type Replacement,
} from "./atomic_write.ts";
import { orOsError, osError, refused } from "./errno.ts";
import { kindOf } from "./stat.ts";

/** What a handle is for. */
export type HandleMode = "read" | "replace";

/** Why the table refused a request (the server turns each into its dialect's error). */
export type HandleProblem =
  | "unknown"
  | "exists"
  | "tooMany"
  | "notReadable"
  | "notWritable"
  | "complete";

/** A request the handle table refused, naming the handle. */
export class FileHandleError extends Error {
  /** Why. */
  readonly problem: HandleProblem;
  /** The handle id. */
  readonly handleId: string;

  /** @param message says what and names the handle */
  constructor(problem: HandleProblem, handleId: string, message: string) {
    super(message);
    this.name = "FileHandleError";
    this.problem = problem;
    this.handleId = handleId;
  }
}

/** Bounds of a {@linkcode FileHandles} table. */
export interface FileHandleLimits {
  /** The most handles open at once. */
  maxOpen: number;
  /** The most block bytes being read or written at once; more requests wait. */
  maxBytesInFlight: number;
}

interface OpenHandle {
  mode: HandleMode;
  file: fsp.FileHandle;
  /** Set for `replace` handles until they are committed or discarded. */
  replacement?: Replacement;
  /** The last operation on this handle: operations on one handle run in order. */
  tail: Promise<unknown>;
}

/**
 * A handle being opened: its id is taken, so a second open of it is
 * refused, and blocks or a close sent behind the open queue on its `tail`
 * (which starts with the open itself) and run once it has ended.
 */
interface Opening {
  opening: true;
  tail: Promise<unknown>;
}

type Slot = OpenHandle | Opening;

const isOpening = (slot: Slot | undefined): slot is Opening =>
  slot !== undefined && "opening" in slot;

/**
 * The handle table of one session.
 *
 * @example
 * ```ts
 * import { FileHandles } from "./file_handles.ts";
 * const handles = new FileHandles({ maxOpen: 8, maxBytesInFlight: 1 << 22 });
 * await handles.open("h", "/etc/hostname", "read");
 * const { bytes, eof } = await handles.readBlock("h", 0, 4096);
 * await handles.close("h");
 * ```
 */
export class FileHandles {
  readonly #limits: FileHandleLimits;
  readonly #budget: ByteBudget;
  readonly #handles = new Map<string, Slot>();
  /** Counts {@linkcode discardAll} calls, so that an open in progress sees one. */
  #generation = 0;

  /** @param limits how many handles, and how many bytes in flight */
  constructor(limits: FileHandleLimits) {
    this.#limits = limits;
    this.#budget = new ByteBudget(limits.maxBytesInFlight);
  }

  /** The handles open (or being opened) now. */
  get size(): number {
    return this.#handles.size;
  }

  /**
   * Open `path` (absolute) as handle `id`: `read` wants an existing regular
   * file; `replace` follows a final symlink to the file it names and
   * refuses a directory (`EISDIR`) or other non-regular file (`EINVAL`).
   *
   * @throws {FileHandleError} for a taken id or a full table
   * @throws {FileSystemError} when the file cannot be opened
   */
  async open(id: string, path: string, mode: HandleMode): Promise<void> {
    if (this.#handles.has(id)) {
      throw new FileHandleError("exists", id, `file handle \`${id}\` already exists`);
    }
    if (this.#handles.size >= this.#limits.maxOpen) {
      throw new FileHandleError(
        "tooMany",
        id,
        `at most ${this.#limits.maxOpen} file handles may be open per session`,
      );
    }
    let opened = () => {};
    const slot: Opening = { opening: true, tail: new Promise<void>((r) => opened = r) };
    this.#handles.set(id, slot);
    const generation = this.#generation;
    let handle: OpenHandle;
    try {
      handle = mode === "read" ? await openForRead(path) : await openForReplace(path);
    } catch (err) {
      if (this.#generation === generation) this.#handles.delete(id);
      opened();
      throw err;
    }
    if (this.#generation !== generation) {
      // Discarded while it was being opened: it must leave no trace either.
      await discard(handle);
      opened();
      throw new FileHandleError("unknown", id, `file handle \`${id}\` was discarded`);
    }
    // What was queued behind the open runs after it, in order, on the handle.
    handle.tail = slot.tail;
    this.#handles.set(id, handle);
    opened();
  }

  /** Up to `len` bytes from `offset`; `eof` when fewer were left. */
  async readBlock(
    id: string,
    offset: number,
    len: number,
  ): Promise<{ bytes: Uint8Array; eof: boolean }> {
    return await this.#queue(id, len, async (handle) => {
      if (handle.mode !== "read") {
        throw new FileHandleError("notReadable", id, `file handle \`${id}\` is open for replace`);
      }
      const bytes = new Uint8Array(len);
      let done = 0;
      while (done < len) {
        const { bytesRead } = await handle.file.read(bytes, done, len - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return { bytes: bytes.subarray(0, done), eof: done < len };
    });
  }

  /**
   * Write `bytes` at `offset` of a `replace` handle's file; with `eof` the
   * file then replaces the target, and later blocks are refused.
   */
  async writeBlock(id: string, offset: number, bytes: Uint8Array, eof = false): Promise<void> {
    return await this.#queue(id, bytes.byteLength, async (handle) => {
      if (handle.mode !== "replace") {
        throw new FileHandleError("notWritable", id, `file handle \`${id}\` is open for read`);
      }
      const replacement = handle.replacement;
      if (!replacement) {
        throw new FileHandleError(
          "complete",
          id,
          `file handle \`${id}\` was already completed by a block with eof`,
        );
      }
      await orOsError("writeBlock", replacement.target, () => writeAll(handle.file, bytes, offset));
      if (eof) await this.#commit(handle, replacement);
    });
  }

  /**
   * Close handle `id` (an unknown one is fine): a `replace` handle's file
   * replaces its target now, unless a block with `eof` already did.
   */
  async close(id: string): Promise<void> {
    if (!this.#handles.has(id)) return;
    await this.#queue(id, 0, async (handle) => {
      this.#handles.delete(id);
      if (handle.replacement) return await this.#commit(handle, handle.replacement);
      await handle.file.close().catch(() => {});
    }).catch((err) => {
      // Closed (or its open failed) by what was queued before: nothing to close.
      if (!(err instanceof FileHandleError && err.problem === "unknown")) throw err;
    });
  }

  /** Close every handle without committing any: the session is over. */
  async discardAll(): Promise<void> {
    const open = [...this.#handles.values()].filter((h): h is OpenHandle => !isOpening(h));
    this.#handles.clear();
    // Handles still being opened see this and discard themselves.
    this.#generation++;
    await Promise.all(open.map(discard));
  }

  /**
   * Run `work` on handle `id` after everything sent to it before (its open
   * included), with `bytes` of the budget; the handle is looked up when the
   * turn comes, so a close or failed open before it makes it "unknown".
   */
  #queue<T>(id: string, bytes: number, work: (handle: OpenHandle) => Promise<T>): Promise<T> {
    const slot = this.#handles.get(id);
    if (slot === undefined) {
      return Promise.reject(new FileHandleError("unknown", id, `unknown file handle \`${id}\``));
    }
    const run = slot.tail.catch(() => {}).then(async () => {
      const handle = this.#handles.get(id);
      if (handle === undefined || isOpening(handle)) {
        throw new FileHandleError("unknown", id, `unknown file handle \`${id}\``);
      }
      const release = await this.#budget.take(bytes);
      try {
        return await work(handle);
      } finally {
        release();
      }
    });
    slot.tail = run;
    return run;
  }

  /** The temporary file takes the target's place; on failure it is removed. */
  async #commit(handle: OpenHandle, r: Replacement): Promise<void> {
    handle.replacement = undefined;
    await commitReplacement(r, "writeBlock", r.target);
  }
}

/** Close `handle` after its operations, removing a replace handle's temporary file. */
async function discard(handle: OpenHandle): Promise<void> {
  await handle.tail.catch(() => {});
  if (handle.replacement) await abandonReplacement(handle.replacement);
  else await handle.file.close().catch(() => {});
  handle.replacement = undefined;
}

/** A regular file, opened without blocking on a fifo and checked by its descriptor. */
async function openForRead(path: string): Promise<OpenHandle> {
  const file = await orOsError(
    "open",
    path,
    () => fsp.open(path, constants.O_RDONLY | constants.O_NONBLOCK),
  );
  const st = await file.stat().catch((err) => {
    void file.close();
    throw osError("open", path, err);
  });
  if (!st.isFile()) {
    await file.close().catch(() => {});
    throw st.isDirectory()
      ? osError("open", path, { code: "EISDIR" })
      : refused("open", path, "EINVAL", `${kindOf(st)} is not a regular file`);
  }
  return { mode: "read", file, tail: Promise.resolve() };
}

/** A new temporary file beside the file `path` names, to replace it later. */
async function openForReplace(path: string): Promise<OpenHandle> {
  const replacement = await openReplacement("open", path, "partial");
  return { mode: "replace", file: replacement.file, replacement, tail: Promise.resolve() };
}
