/**
 * The client library: connect to exec-servers (stdio, websocket, ssh),
 * start processes as handles, use files; and `Environment`, which gives
 * local and remote machines one interface. Importing it loads no server
 * code; a server in this process comes from `connectInProcess` (the
 * package root, or `./in-process`).
 *
 * @example
 * ```ts
 * import { Environment } from "./mod.ts";
 * import { connectInProcess } from "./connect/in_process.ts";
 * const client = await connectInProcess();
 * const env = Environment.remote(client);
 * const { stdout } = await env.process.run(["echo", "hi"]);
 * await client.close();
 * ```
 *
 * @module
 */
export { ExecServerClient } from "./client.ts";
export type { ProcessListEntry, SessionInfo } from "../protocol/sessions.ts";
export { ProtocolCalls, toBytes } from "./protocol_calls.ts";
export type * from "./options.ts";
export type {
  ChildServerOptions,
  ChildStderr,
  ConnectionLifetime,
} from "./connect/child_server.ts";
export {
  Environment,
  type LocalEnvironmentOptions,
  type RemoteEnvironmentOptions,
} from "./environment.ts";
export {
  ClientTimeoutError,
  ConnectError,
  ConnectionClosedError,
  ConnectTimeoutError,
  InitializeTimeoutError,
  ProcessError,
  ServerError,
  SpawnError,
} from "./errors.ts";
export { LocalProcesses, type LocalProcessesOptions } from "./local_process.ts";
export { sandboxedFileSystem } from "./sandboxed_fs.ts";
export {
  DEFAULT_CWD,
  DEFAULT_ENV,
  DEFAULT_PATH,
  type SandboxOptions,
  type SpawnOptions,
} from "./spawn_options.ts";
export type { ExecProcess, OutputChunk, ProcessExit } from "./process_handle.ts";
export type { RunOptions, RunResult, SpawnedProcess, TerminateOptions } from "./process_handle.ts";
export {
  type FsCalls,
  RemoteFileSystem,
  type RemoteFileSystemOptions,
  toFileSystemError,
} from "./remote_fs.ts";
// The filesystem contract is part of the client's API (`client.fs`, `env.fs`).
export * from "../fs/types.ts";
export { shellQuote, sshCommandLine, type SshCommandOptions } from "./ssh.ts";
export {
  type BinaryPlatform,
  type BinaryTarget,
  BootstrapError,
  type BootstrapEvent,
  type BootstrapFailure,
  type SshBootstrapOptions,
  type UploadEncoding,
} from "./ssh_bootstrap.ts";
