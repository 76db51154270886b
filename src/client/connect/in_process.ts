/**
 * The one entry point from the client into the server: a server in this
 * process, connected through memory. It loads the whole server, which is
 * why it is not part of `ExecServerClient` (importing the client loads no
 * server code): import it from the package root or from `./in-process`.
 *
 * @example
 * ```ts
 * import { connectInProcess } from "./in_process.ts";
 * const client = await connectInProcess({ maxProcesses: 16 });
 * console.log((await client.run(["echo", "hi"])).stdout);
 * await client.close();
 * ```
 *
 * @module
 */
import type { ServerOptions } from "../../server/options.ts";
import { startInProcessServer } from "../../server/in_process.ts";
import { ExecServerClient } from "../client.ts";
import type { ClientOptions } from "../options.ts";

/**
 * Run a server in this process and connect to it: the same protocol and
 * semantics as a remote server, with no transport.
 */
export function connectInProcess(
  serverOptions: Partial<ServerOptions> = {},
  opts: ClientOptions = {},
): Promise<ExecServerClient> {
  const { connection, served } = startInProcessServer(serverOptions);
  return ExecServerClient.connect(connection, opts, {
    target: "the in-process server",
    dispose: () => served.catch(() => {}),
  });
}
