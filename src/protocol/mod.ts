/**
 * The exec-server.v0 wire contract: message shapes, method types, error
 * codes and parameter validation. Pure: no I/O.
 *
 * @module
 */
export * from "./errors.ts";
export * from "./messages.ts";
export * from "./methods.ts";
export * from "./descriptors.ts";
export {
  base64FieldBytes,
  Base64Part,
  decodeBase64,
  encodeBase64,
  InvalidBase64Error,
} from "./base64.ts";
export { type CheckedStart, checkStartParams } from "./spawn_rules.ts";
export {
  accessAt,
  type SandboxAccess,
  type SandboxPolicy,
  type SandboxRule,
} from "./sandbox_policy.ts";
export { checkSandboxParams } from "./sandbox_params.ts";
export {
  type ProcessListEntry,
  type ProcessListParams,
  type ProcessListResult,
  readSessionRequest,
  readTtlMs,
  type SessionInfo,
  type SessionRequest,
} from "./sessions.ts";
export {
  checkWalkOptions,
  FsWalk,
  type FsWalkParams,
  WALK_MAXIMUMS,
  type WalkEntry,
  type WalkError,
  type WalkOptions,
  type WalkResult,
} from "./walk.ts";
export {
  checkBlockLength,
  checkHandleId,
  checkOffset,
  checkOpenMode,
  FileHandleRequests,
  type FsCloseParams,
  type FsOpenMode,
  type FsOpenParams,
  type FsReadBlockParams,
  type FsReadBlockResult,
  type FsWriteBlockParams,
  MAX_BLOCK_BYTES,
  MAX_HANDLE_ID_BYTES,
  MAX_OPEN_HANDLES,
} from "./file_handles.ts";
export {
  type CheckedHttpRequest,
  checkHttpRequest,
  HttpBodyDelta,
  type HttpBodyDeltaParams,
  type HttpHeader,
  HttpRequest,
  type HttpRequestParams,
  type HttpRequestResult,
  MAX_REDIRECTS,
} from "./http_request.ts";
