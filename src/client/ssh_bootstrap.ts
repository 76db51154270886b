/**
 * Bootstrap for `connectSsh`: make sure the remote host runs exactly the
 * local `exec-server` binary, uploading it through the same ssh connection
 * when its cache lacks it.
 *
 * One ssh invocation does everything. The remote command is a fixed
 * one-liner, `exec sh -c 'eval "$(head -c N)"' exec-server-bootstrap ARGS`,
 * which reads an N-byte POSIX `sh` script from stdin (so the login shell
 * only ever parses that line, whatever shell it is). The script checks the
 * platform, picks a cache directory and either `exec`s the cached binary
 * or asks for it, reads exactly `size` bytes from stdin into a temp file,
 * says it has them, verifies, `chmod 700`s and renames it into place, then
 * `exec`s it. Either way ssh's stdio becomes the server's stdio. The script
 * speaks to the client in lines on stdout that start with a per-connection
 * marker; the client starts JSON-RPC only after the `ready` line.
 *
 * This file starts the ssh child and is the bootstrap's public face; the
 * parts live in `ssh_bootstrap/`: the error, the options, platform
 * detection, the local binary's hash cache, the script, the conversation
 * with it and the reader of its lines.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { VERSION } from "../version.ts";
import {
  type ChildServer,
  type ChildServerOptions,
  startChildServer,
} from "./connect/child_server.ts";
import { ConnectionClosedError } from "./errors.ts";
import { sshCommandLine, type SshCommandOptions } from "./ssh.ts";
import { describeLocalBinary, type LocalBinary } from "./ssh_bootstrap/cache.ts";
import { BootstrapSession } from "./ssh_bootstrap/conversation.ts";
import { BootstrapError } from "./ssh_bootstrap/errors.ts";
import type { SshBootstrapOptions } from "./ssh_bootstrap/options.ts";
import type { BinaryPlatform } from "./ssh_bootstrap/platform.ts";
import { bootstrapRemoteCommand, bootstrapScript } from "./ssh_bootstrap/script.ts";

export { BootstrapError, type BootstrapFailure } from "./ssh_bootstrap/errors.ts";
export type { BootstrapEvent, SshBootstrapOptions } from "./ssh_bootstrap/options.ts";
export { type BinaryPlatform, detectBinaryPlatforms } from "./ssh_bootstrap/platform.ts";
export { describeLocalBinary, type LocalBinary } from "./ssh_bootstrap/cache.ts";
export {
  bootstrapRemoteCommand,
  bootstrapScript,
  type BootstrapScriptParams,
} from "./ssh_bootstrap/script.ts";

/** Options of {@linkcode startBootstrappedSsh}. */
export interface BootstrappedSshOptions extends SshCommandOptions, ChildServerOptions {
  /** What to run and where to cache it. */
  bootstrap: SshBootstrapOptions;
}

/** A child ssh whose remote end is (about to be) the bootstrapped server. */
export interface BootstrappedServer extends ChildServer {
  /** The binary's path on the remote. */
  remotePath: string;
  /** Whether this connection uploaded it (false: the cached copy was valid). */
  uploaded: boolean;
  /**
   * Turn a failed handshake into a {@linkcode BootstrapError} of kind
   * `start` when the server never came up; other errors pass unchanged.
   */
  startFailure(err: unknown): unknown;
}

const encoder = new TextEncoder();

/**
 * Run `ssh destination` with the bootstrap script, upload the binary when
 * the remote's cache lacks it, and return once the remote `exec`ed it.
 *
 * @example
 * ```ts
 * import { startBootstrappedSsh } from "./ssh_bootstrap.ts";
 * const server = await startBootstrappedSsh("me@pi", {
 *   bootstrap: { localBinary: "dist/exec-server" },
 * });
 * console.log(server.remotePath, server.uploaded ? "uploaded" : "cached");
 * ```
 *
 * @throws {BootstrapError} when any stage fails (see {@linkcode BootstrapFailure})
 * @throws {ConnectError} when ssh cannot be started
 */
export async function startBootstrappedSsh(
  destination: string,
  opts: BootstrappedSshOptions,
): Promise<BootstrappedServer> {
  const boot = opts.bootstrap;
  if (opts.binary !== undefined) {
    throw new TypeError("give either binary or bootstrap to connectSsh, not both");
  }
  const version = boot.version ?? VERSION;
  if (!/^[\w.+-]+$/.test(version)) {
    throw new TypeError(`bootstrap.version must be a plain word, got ${JSON.stringify(version)}`);
  }
  const { local, platforms } = await readLocalBinary(destination, boot);
  const marker = `exec-server-bootstrap:${randomBytes(9).toString("hex")}`;
  const script = encoder.encode(bootstrapScript({
    marker,
    sha256: local.sha256,
    size: local.size,
    dirName: `${version}-${local.sha256.slice(0, 16)}`,
    tag: randomBytes(6).toString("hex"),
    remoteDir: boot.remoteDir,
    platforms,
  }));
  const [command, args] = sshCommandLine(destination, {
    ...opts,
    binary: bootstrapRemoteCommand(script.byteLength),
  });
  const session = new BootstrapSession(destination, local, marker, boot, platforms);
  const child = await startChildServer(
    command,
    args,
    opts,
    (io) => session.run(script, io.stdout, io.stdin, io.explainEnd),
  );
  const remotePath = session.remotePath!;
  return {
    ...child,
    remotePath,
    uploaded: session.uploaded,
    startFailure: (err) =>
      err instanceof ConnectionClosedError
        ? new BootstrapError(destination, "start", `the server did not start: ${err.reason}`, {
          remotePath,
          cause: err,
        })
        : err,
  };
}

/**
 * The local binary, and the platforms the remote must be one of (undefined:
 * any). Failing here, before ssh starts, spares a connection that could
 * only end in an error.
 */
async function readLocalBinary(
  destination: string,
  boot: SshBootstrapOptions,
): Promise<{ local: LocalBinary; platforms: BinaryPlatform[] | undefined }> {
  let local: LocalBinary;
  try {
    local = await describeLocalBinary(boot.localBinary);
  } catch (err) {
    throw new BootstrapError(
      destination,
      "local",
      `cannot read ${boot.localBinary}: ${err instanceof Error ? err.message : err}`,
      { cause: err },
    );
  }
  const platforms = boot.platform === "any"
    ? undefined
    : boot.platform !== undefined
    ? [boot.platform]
    : local.platforms === "any"
    ? undefined
    : local.platforms;
  if (boot.platform === undefined && local.platforms === undefined) {
    throw new BootstrapError(
      destination,
      "local",
      `cannot tell which platform ${local.path} is built for (not ELF, Mach-O or a #! script); ` +
        `pass bootstrap.platform`,
    );
  }
  return { local, platforms };
}
