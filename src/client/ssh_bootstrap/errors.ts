/**
 * The one error a bootstrap throws, with the stage that failed as a field,
 * so callers can tell a wrong platform or a full disk from a dead link
 * without parsing messages.
 *
 * @module
 */

/** What stage of the bootstrap failed; see {@linkcode BootstrapError}. */
export type BootstrapFailure =
  /** The local binary cannot be read, or its platform cannot be told. */
  | "local"
  /** The remote's `uname -s`/`uname -m` do not match the binary's platform. */
  | "platform"
  /** No cache directory is creatable, writable, ours and executable. */
  | "directory"
  /** Writing the upload failed on the remote (usually a full disk). */
  | "write"
  /** The upload arrived with the wrong size or checksum. */
  | "verify"
  /** The verified upload could not be made executable or renamed into place. */
  | "install"
  /** The installed file cannot be executed (a `noexec` mount). */
  | "noexec"
  /** ssh or the remote script ended before the server was running. */
  | "exited"
  /** The remote did not answer within `bootstrap.timeoutMs`. */
  | "timeout"
  /** The remote answered something the client does not understand. */
  | "protocol"
  /** The binary was in place but did not come up as a server. */
  | "start";

/**
 * Bootstrapping the server on a remote host failed. `kind` says at which
 * stage; the message names the host and, once known, the remote path.
 *
 * @example
 * ```ts
 * import { BootstrapError, ExecServerClient } from "../../../mod.ts";
 * try {
 *   await ExecServerClient.connectSsh("me@pi", {
 *     bootstrap: { localBinary: "dist/exec-server" },
 *   });
 * } catch (err) {
 *   if (err instanceof BootstrapError && err.kind === "platform") {
 *     console.error(`build for ${err.remotePlatform} first`);
 *   }
 * }
 * ```
 */
export class BootstrapError extends Error {
  /** The ssh destination, e.g. `me@host`. */
  readonly host: string;
  /** The stage that failed. */
  readonly kind: BootstrapFailure;
  /** The remote binary's path, once the remote chose it. */
  readonly remotePath: string | undefined;
  /** The remote's `uname -s`/`uname -m`, for a `platform` failure. */
  readonly remotePlatform: string | undefined;

  /**
   * Build the message from the host, the remote path (when known) and `detail`.
   *
   * @param host the ssh destination
   * @param kind the stage that failed
   * @param detail what went wrong
   * @param extra the remote path and platform, when known
   */
  constructor(
    host: string,
    kind: BootstrapFailure,
    detail: string,
    extra: { remotePath?: string; remotePlatform?: string; cause?: unknown } = {},
  ) {
    const where = extra.remotePath === undefined ? "" : ` at ${extra.remotePath}`;
    super(`cannot bootstrap exec-server on ${host}${where}: ${detail}`, { cause: extra.cause });
    this.name = "BootstrapError";
    this.host = host;
    this.kind = kind;
    this.remotePath = extra.remotePath;
    this.remotePlatform = extra.remotePlatform;
  }
}
