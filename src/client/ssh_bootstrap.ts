/**
 * Bootstrap for `connectSsh`: make sure the remote host runs exactly one
 * of the local `exec-server` binaries (the one built for its platform),
 * uploading it, compressed, through the same ssh connection when its cache
 * lacks it.
 *
 * One ssh invocation does everything. The remote command is a fixed
 * one-liner, `exec sh -c 'eval "$(head -c N)"' exec-server-bootstrap ARGS`,
 * which reads an N-byte POSIX `sh` script from stdin (so the login shell
 * only ever parses that line, whatever shell it is). The script carries
 * every binary on offer (platform, sha256, size, cache directory name),
 * picks the one its `uname` matches, picks a cache directory and either
 * `exec`s the cached binary or asks for it, saying whether it can unpack
 * gzip. The client answers with a header line (encoding and byte count)
 * and exactly that many bytes; the remote unpacks them into a temp file,
 * says it has them, verifies, `chmod 700`s and renames it into place, then
 * `exec`s it. Either way ssh's stdio becomes the server's stdio. The
 * script speaks to the client in lines on stdout that start with a
 * per-connection marker; the client starts JSON-RPC only after the `ready`
 * line.
 *
 * This file starts the ssh child and is the bootstrap's public face; the
 * parts live in `ssh_bootstrap/`: the error, the options, platform
 * detection, the binaries on offer, the local binary's hash cache, what an
 * upload sends (and its compression), the script, the conversation with
 * it, the messages for its failures, the reader of its lines and the
 * progress line.
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
import { resolveCandidates } from "./ssh_bootstrap/candidates.ts";
import { BootstrapSession } from "./ssh_bootstrap/conversation.ts";
import { BootstrapError } from "./ssh_bootstrap/errors.ts";
import type { SshBootstrapOptions } from "./ssh_bootstrap/options.ts";
import { bootstrapRemoteCommand, bootstrapScript } from "./ssh_bootstrap/script.ts";

export { BootstrapError, type BootstrapFailure } from "./ssh_bootstrap/errors.ts";
export type {
  BinaryTarget,
  BootstrapEvent,
  SshBootstrapOptions,
  UploadEncoding,
} from "./ssh_bootstrap/options.ts";
export {
  type BinaryPlatform,
  detectBinaryPlatforms,
  TARGET_PLATFORMS,
  targetOfPlatform,
} from "./ssh_bootstrap/platform.ts";
export { describeLocalBinary, type LocalBinary } from "./ssh_bootstrap/cache.ts";
export { type Candidate, resolveCandidates } from "./ssh_bootstrap/candidates.ts";
export {
  bootstrapRemoteCommand,
  bootstrapScript,
  type BootstrapScriptParams,
  type ScriptCandidate,
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
  /** The target of the binary the remote chose (see `BootstrapEvent`). */
  target: string;
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
  const candidates = await resolveCandidates(destination, boot);
  const marker = `exec-server-bootstrap:${randomBytes(9).toString("hex")}`;
  const script = encoder.encode(bootstrapScript({
    marker,
    tag: randomBytes(6).toString("hex"),
    remoteDir: boot.remoteDir,
    candidates: candidates.map(({ binary, platforms }) => ({
      sha256: binary.sha256,
      size: binary.size,
      dirName: `${version}-${binary.sha256.slice(0, 16)}`,
      platforms,
    })),
  }));
  const [command, args] = sshCommandLine(destination, {
    ...opts,
    binary: bootstrapRemoteCommand(script.byteLength),
  });
  const session = new BootstrapSession(destination, candidates, marker, boot);
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
    target: session.target!,
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
