/**
 * The method set of exec-server.v0 and its announced extensions, bound to
 * one process table, one set of file handles and one HTTP client: a plain
 * connection's, or a resumable v0 session's (which outlive connections).
 *
 * @module
 */
import { LocalFileSystem } from "../fs/local.ts";
import { checkSandboxParams } from "../protocol/sandbox_params.ts";
import { FsWalk } from "../protocol/walk.ts";
import type { FileHandles } from "../fs/file_handles.ts";
import { fileHandleMethods } from "./file_handle_methods.ts";
import { withSandboxGate } from "./fs_sandbox.ts";
import { fsMethods } from "./fs_methods.ts";
import { HttpRequests } from "./http_methods.ts";
import type { MethodHandler } from "./method_handlers.ts";
import type { ServerOptions } from "./options.ts";
import { processMethods } from "./process_methods.ts";
import type { NotificationSink, ProcessTable } from "./process_table.ts";
import { walkHandler } from "./walk_methods.ts";

/** A v0 request's `sandbox` member, read. */
export const v0Sandbox = (value: unknown) => checkSandboxParams(value);

/** The HTTP client of a v0 connection or session, notifying through `sink`. */
export function v0Http(sink: NotificationSink, opts: ServerOptions): HttpRequests {
  return new HttpRequests(sink, {
    maxBufferedBytes: opts.maxReadFileBytes,
    readSandbox: v0Sandbox,
  });
}

/** What the v0 methods act on. */
export interface V0Parts {
  /** The processes. */
  table: ProcessTable;
  /** The HTTP client (`http/request`). */
  http: HttpRequests;
  /** The open file handles (`fs/open` ...). */
  handles: FileHandles;
  /** Set for a resumable session: the largest `ttlMs` a process may ask for. */
  maxTtlMs?: number;
}

/** Every v0 method handler, bound to `parts`. */
export function v0Methods(parts: V0Parts, opts: ServerOptions): Map<string, MethodHandler> {
  return new Map([
    ...processMethods(parts.table, { maxTtlMs: parts.maxTtlMs }),
    ...withSandboxGate(
      new Map([
        ...fsMethods(new LocalFileSystem({ maxReadFileBytes: opts.maxReadFileBytes })),
        [FsWalk.method, walkHandler({ strict: false, uris: false, readSandbox: v0Sandbox })],
      ]),
      v0Sandbox,
    ),
    ...parts.http.handlers(),
    ...fileHandleMethods(parts.handles, { readSandbox: v0Sandbox }),
  ]);
}
