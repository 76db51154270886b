/**
 * Telling a failure the sandbox caused from an ordinary one, for
 * `sandboxDenied`. The kernel does not say why a process gave up, so this
 * is a rule over what can be seen: the process failed (an exit status from
 * 1 to 128: above that bubblewrap reports a death by signal) and the end of
 * its output carries the words a denied write or connection prints.
 *
 * @module
 */
import type { ExitStatus } from "../types.ts";

/** How much of the output's end is kept and searched. */
export const DENIAL_TAIL_BYTES = 4096;

/** What a write the sandbox refused prints (strerror texts and errno names). */
const FILE_DENIED =
  /read-only file system|permission denied|operation not permitted|\b(EROFS|EACCES|EPERM)\b/i;

/** What a connection the sandbox refused prints, when the network is restricted. */
const NETWORK_DENIED = new RegExp(
  "network is unreachable|connection refused|could not resolve host|" +
    "temporary failure in name resolution|name or service not known|" +
    "\\b(ENETUNREACH|ECONNREFUSED|EAI_AGAIN)\\b",
  "i",
);

/**
 * The last {@linkcode DENIAL_TAIL_BYTES} of a process's output, all
 * streams together, in a fixed window that chunks are copied into.
 */
export class OutputTail {
  #window = new Uint8Array(DENIAL_TAIL_BYTES);
  #length = 0;

  /** Add a chunk as it is read; the bytes are copied (chunks are lent). */
  push(chunk: Uint8Array): void {
    const size = this.#window.length;
    if (chunk.byteLength >= size) {
      this.#window.set(chunk.subarray(chunk.byteLength - size));
      this.#length = size;
      return;
    }
    const keep = Math.min(this.#length, size - chunk.byteLength);
    this.#window.copyWithin(0, this.#length - keep, this.#length);
    this.#window.set(chunk, keep);
    this.#length = keep + chunk.byteLength;
  }

  /** The kept bytes as text (at most the window, decoded leniently). */
  text(): string {
    return new TextDecoder().decode(this.#window.subarray(0, this.#length));
  }
}

/**
 * Whether a sandboxed process's failure was the sandbox's doing.
 *
 * @example
 * ```ts
 * import { sandboxDenied } from "./denial.ts";
 * const exit = { exitCode: 1, signal: null };
 * sandboxDenied(exit, "touch: cannot touch '/etc/x': Read-only file system\n", false); // true
 * sandboxDenied({ exitCode: 3, signal: null }, "", false); // false
 * ```
 */
export function sandboxDenied(exit: ExitStatus, tail: string, network: boolean): boolean {
  if (exit.exitCode === 0 || exit.exitCode > 128 || exit.signal !== null) return false;
  return FILE_DENIED.test(tail) || (!network && NETWORK_DENIED.test(tail));
}
