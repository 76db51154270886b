/**
 * The wire text of what the table tells a client about a process: output
 * and exit notifications, and `process/read` results. Pure functions, so
 * the shapes can be checked without starting anything.
 *
 * @module
 */
import { encodeBase64 } from "../protocol/base64.ts";
import { Notifications } from "../protocol/descriptors.ts";
import type { ProcessExitedParams, ProcessReadResult, StreamName } from "../protocol/methods.ts";
import type { TimedExit } from "../process/controller.ts";
import type { OutputSlice } from "./output_buffer.ts";

/**
 * A `process/output` notification. Built by hand: base64 needs no escaping,
 * and the chunk is the bulk of every output notification.
 *
 * @param idJson the process id, already as a JSON string
 */
export function outputNote(
  idJson: string,
  stream: StreamName,
  data: Uint8Array,
  seq: number,
): string {
  return `{"method":"process/output","params":{"processId":${idJson},"stream":"${stream}","chunk":"${
    encodeBase64(data)
  }","seq":${seq}}}`;
}

/** A `process/exited` notification. */
export function exitedNote(processId: string, startedAtMs: number, exit: TimedExit): string {
  const params: ProcessExitedParams = {
    processId,
    exitCode: exit.exitCode,
    signal: exit.signal,
    startedAtMs,
    exitedAtMs: exit.exitedAtMs,
    durationMs: exit.durationMs,
  };
  if (exit.sandboxDenied !== undefined) params.sandboxDenied = exit.sandboxDenied;
  return JSON.stringify({ method: Notifications.processExited.method, params });
}

/**
 * A `process/read` result. The exit is reported only with the last chunk,
 * so a client paging with `maxBytes` never stops early.
 */
export function readResult(slice: OutputSlice, exit: TimedExit | undefined): ProcessReadResult {
  const exited = exit !== undefined && slice.complete;
  const result: ProcessReadResult = {
    chunks: slice.chunks.map((c) => ({
      seq: c.seq,
      stream: c.stream,
      chunk: encodeBase64(c.data),
    })),
    nextSeq: slice.nextSeq,
    exited,
    exitCode: exited ? exit.exitCode : null,
  };
  if (exited) {
    result.signal = exit.signal;
    result.durationMs = exit.durationMs;
    if (exit.sandboxDenied !== undefined) result.sandboxDenied = exit.sandboxDenied;
  }
  if (slice.evicted) result.evicted = slice.evicted;
  return result;
}
