/**
 * One typed descriptor per method and notification, shared by both ends:
 * the client calls `call(Requests.processStart, params)` and gets a
 * `ProcessStartResult`; the server registers a handler for the same
 * descriptor and must return that type. A renamed field then fails to
 * compile on both sides instead of breaking on the wire.
 *
 * @module
 */
import type { ProcessListParams, ProcessListResult } from "./sessions.ts";
import {
  type EmptyResult,
  type FsCopyParams,
  type FsCreateDirectoryParams,
  type FsGetMetadataParams,
  type FsGetMetadataResult,
  type FsReadDirectoryParams,
  type FsReadDirectoryResult,
  type FsReadFileParams,
  type FsReadFileResult,
  type FsRemoveParams,
  type FsRenameParams,
  type FsWriteFileParams,
  type InitializeParams,
  type InitializeResult,
  Method,
  type ProcessCloseStdinParams,
  type ProcessExitedParams,
  type ProcessOutputParams,
  type ProcessReadParams,
  type ProcessReadResult,
  type ProcessResizeParams,
  type ProcessSignalParams,
  type ProcessSignalResult,
  type ProcessStartParams,
  type ProcessStartResult,
  type ProcessTerminateParams,
  type ProcessTerminateResult,
  type ProcessWriteParams,
  type ProcessWriteResult,
} from "./methods.ts";

/**
 * A request method: its name, with its params and result as types only.
 * `P` and `R` are carried by the phantom `types` member, which is never
 * set at run time.
 */
export interface RequestType<P, R> {
  /** The wire name, e.g. `"process/start"`. */
  readonly method: string;
  /** Distinguishes requests from notifications. */
  readonly kind: "request";
  /** Types only: never present at run time. */
  readonly types?: { params: P; result: R };
}

/** A notification: its name, with its params as a type only. */
export interface NotificationType<P> {
  /** The wire name, e.g. `"process/output"`. */
  readonly method: string;
  /** Distinguishes notifications from requests. */
  readonly kind: "notification";
  /** Types only: never present at run time. */
  readonly types?: { params: P };
}

/** The params type of a request or notification descriptor. */
export type ParamsOf<T> = T extends RequestType<infer P, unknown> ? P
  : T extends NotificationType<infer P> ? P
  : never;

/** The result type of a request descriptor. */
export type ResultOf<T> = T extends RequestType<unknown, infer R> ? R : never;

function request<P, R>(method: string): RequestType<P, R> {
  return Object.freeze({ method, kind: "request" as const });
}

function notification<P>(method: string): NotificationType<P> {
  return Object.freeze({ method, kind: "notification" as const });
}

/** The type of {@linkcode Requests}: one descriptor per request method. */
export interface RequestDescriptors {
  /** `Method.Initialize`. */
  readonly initialize: RequestType<InitializeParams, InitializeResult>;
  /** `Method.ProcessStart`. */
  readonly processStart: RequestType<ProcessStartParams, ProcessStartResult>;
  /** `Method.ProcessRead`. */
  readonly processRead: RequestType<ProcessReadParams, ProcessReadResult>;
  /** [ext] `Method.ProcessList`: a session's processes. */
  readonly processList: RequestType<ProcessListParams, ProcessListResult>;
  /** `Method.ProcessWrite`. */
  readonly processWrite: RequestType<ProcessWriteParams, ProcessWriteResult>;
  /** `Method.ProcessTerminate`. */
  readonly processTerminate: RequestType<ProcessTerminateParams, ProcessTerminateResult>;
  /** `Method.ProcessCloseStdin`. */
  readonly processCloseStdin: RequestType<ProcessCloseStdinParams, EmptyResult>;
  /** `Method.ProcessResize`. */
  readonly processResize: RequestType<ProcessResizeParams, EmptyResult>;
  /** `Method.ProcessSignal`. */
  readonly processSignal: RequestType<ProcessSignalParams, ProcessSignalResult>;
  /** `Method.FsReadFile`. */
  readonly fsReadFile: RequestType<FsReadFileParams, FsReadFileResult>;
  /** `Method.FsWriteFile`. */
  readonly fsWriteFile: RequestType<FsWriteFileParams, EmptyResult>;
  /** `Method.FsCreateDirectory`. */
  readonly fsCreateDirectory: RequestType<FsCreateDirectoryParams, EmptyResult>;
  /** `Method.FsGetMetadata`. */
  readonly fsGetMetadata: RequestType<FsGetMetadataParams, FsGetMetadataResult>;
  /** `Method.FsReadDirectory`. */
  readonly fsReadDirectory: RequestType<FsReadDirectoryParams, FsReadDirectoryResult>;
  /** `Method.FsRemove`. */
  readonly fsRemove: RequestType<FsRemoveParams, EmptyResult>;
  /** `Method.FsCopy`. */
  readonly fsCopy: RequestType<FsCopyParams, EmptyResult>;
  /** [ext] `Method.FsRename`. */
  readonly fsRename: RequestType<FsRenameParams, EmptyResult>;
}

/**
 * Every request method of exec-server.v0 and its extensions.
 *
 * @example
 * ```ts
 * import { Requests, type ResultOf } from "./descriptors.ts";
 * const m: string = Requests.processStart.method; // "process/start"
 * type Started = ResultOf<typeof Requests.processStart>; // { processId: string }
 * const started: Started = { processId: "p1" };
 * console.log(m, started);
 * ```
 */
export const Requests: RequestDescriptors = Object.freeze({
  initialize: request<InitializeParams, InitializeResult>(Method.Initialize),
  processStart: request<ProcessStartParams, ProcessStartResult>(Method.ProcessStart),
  processRead: request<ProcessReadParams, ProcessReadResult>(Method.ProcessRead),
  processList: request<ProcessListParams, ProcessListResult>(Method.ProcessList),
  processWrite: request<ProcessWriteParams, ProcessWriteResult>(Method.ProcessWrite),
  processTerminate: request<ProcessTerminateParams, ProcessTerminateResult>(
    Method.ProcessTerminate,
  ),
  processCloseStdin: request<ProcessCloseStdinParams, EmptyResult>(Method.ProcessCloseStdin),
  processResize: request<ProcessResizeParams, EmptyResult>(Method.ProcessResize),
  processSignal: request<ProcessSignalParams, ProcessSignalResult>(Method.ProcessSignal),
  fsReadFile: request<FsReadFileParams, FsReadFileResult>(Method.FsReadFile),
  fsWriteFile: request<FsWriteFileParams, EmptyResult>(Method.FsWriteFile),
  fsCreateDirectory: request<FsCreateDirectoryParams, EmptyResult>(Method.FsCreateDirectory),
  fsGetMetadata: request<FsGetMetadataParams, FsGetMetadataResult>(Method.FsGetMetadata),
  fsReadDirectory: request<FsReadDirectoryParams, FsReadDirectoryResult>(Method.FsReadDirectory),
  fsRemove: request<FsRemoveParams, EmptyResult>(Method.FsRemove),
  fsCopy: request<FsCopyParams, EmptyResult>(Method.FsCopy),
  fsRename: request<FsRenameParams, EmptyResult>(Method.FsRename),
});

/** The type of {@linkcode Notifications}. */
export interface NotificationDescriptors {
  /** `initialized`. */
  readonly initialized: NotificationType<Record<string, never> | undefined>;
  /** `process/output`. */
  readonly processOutput: NotificationType<ProcessOutputParams>;
  /** `process/exited`. */
  readonly processExited: NotificationType<ProcessExitedParams>;
}

/** Every notification of exec-server.v0. */
export const Notifications: NotificationDescriptors = Object.freeze({
  initialized: notification<Record<string, never> | undefined>(Method.Initialized),
  processOutput: notification<ProcessOutputParams>(Method.ProcessOutput),
  processExited: notification<ProcessExitedParams>(Method.ProcessExited),
});

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

const STREAMS = new Set(["stdout", "stderr", "pty"]);

/**
 * Whether `params` has the shape of `process/output` params (a client
 * checks what a server sends before trusting it).
 */
export function isProcessOutputParams(params: unknown): params is ProcessOutputParams {
  return isRecord(params) && typeof params.processId === "string" &&
    typeof params.stream === "string" && STREAMS.has(params.stream) &&
    typeof params.chunk === "string" &&
    (params.seq === undefined || typeof params.seq === "number");
}

/** Whether `params` has the shape of `process/exited` params. */
export function isProcessExitedParams(params: unknown): params is ProcessExitedParams {
  return isRecord(params) && typeof params.processId === "string" &&
    typeof params.exitCode === "number" &&
    (params.signal === undefined || params.signal === null || typeof params.signal === "string") &&
    (params.durationMs === undefined || typeof params.durationMs === "number");
}
