/**
 * Connecting through `ssh -T [sshArgs] -- destination binary`, or, with
 * `bootstrap`, through an ssh connection that first uploads the binary.
 *
 * @module
 */
import type { SshClientOptions } from "../options.ts";
import { sshCommandLine } from "../ssh.ts";
import { startBootstrappedSsh } from "../ssh_bootstrap.ts";
import { startChildServer } from "./child_server.ts";
import type { OpenedConnection } from "./opened.ts";

/**
 * Start ssh and connect to the remote server on its stdio.
 *
 * @throws {BootstrapError} when bootstrapping fails (wrong platform, no space, ...)
 */
export async function openSsh(
  destination: string,
  opts: SshClientOptions,
): Promise<OpenedConnection> {
  if (opts.bootstrap === undefined) {
    const [command, args] = sshCommandLine(destination, opts);
    const child = await startChildServer(command, args, opts);
    return { connection: child.connection, lifetime: child.lifetime };
  }
  const server = await startBootstrappedSsh(destination, { ...opts, bootstrap: opts.bootstrap });
  return {
    connection: server.connection,
    lifetime: server.lifetime,
    handshakeFailure: (err) => server.startFailure(err),
  };
}
