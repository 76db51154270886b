/**
 * A connected server's files seen through a sandbox: every `fs/*` request
 * carries the sandbox (**[ext]** in v0), and the server checks each path
 * it touches against it — symlinks resolved on the server's own host —
 * before it reads or writes.
 *
 * @module
 */
import type { RequestType } from "../protocol/descriptors.ts";
import type { FileSystem } from "../fs/types.ts";
import type { ExecServerClient } from "./client.ts";
import { ProtocolCalls } from "./protocol_calls.ts";
import { RemoteFileSystem } from "./remote_fs.ts";
import type { SandboxOptions } from "./spawn_options.ts";

/** The client's calls, with the sandbox added to every `fs/*` request. */
class SandboxedCalls extends ProtocolCalls {
  #client: ExecServerClient;
  #sandbox: SandboxOptions & { mode: "restricted" };

  constructor(client: ExecServerClient, sandbox: SandboxOptions) {
    super();
    this.#client = client;
    this.#sandbox = { ...sandbox, mode: "restricted" };
  }

  call<P, R>(type: RequestType<P, R>, params: P): Promise<R> {
    const sandboxed = type.method.startsWith("fs/")
      ? { ...params, sandbox: this.#sandbox } as P
      : params;
    return this.#client.call(type, sandboxed);
  }

  get capabilities(): Record<string, unknown> {
    return this.#client.capabilities;
  }

  get binaryFrames(): boolean {
    return this.#client.binaryFrames;
  }
}

/**
 * The files of `client`'s host as `sandbox` allows them: a denied access
 * fails with a `FileSystemError` whose errno is `EACCES`.
 *
 * @example
 * ```ts
 * import { connectInProcess } from "./connect/in_process.ts";
 * import { sandboxedFileSystem } from "./sandboxed_fs.ts";
 * const client = await connectInProcess();
 * const fs = sandboxedFileSystem(client, { write: ["/tmp"] });
 * await fs.writeFile("/tmp/ok.txt", new Uint8Array([1]));
 * await fs.writeFile("/etc/no.txt", new Uint8Array([1])).catch((e) => e.errno); // "EACCES"
 * await client.close();
 * ```
 */
export function sandboxedFileSystem(client: ExecServerClient, sandbox: SandboxOptions): FileSystem {
  return new RemoteFileSystem(new SandboxedCalls(client, sandbox));
}
