/**
 * What the client makes of a server's notifications: the protocol's guards
 * check the shape, then the bytes are decoded into events.
 *
 * @module
 */
import { decodeBase64 } from "../protocol/base64.ts";
import { isProcessExitedParams, isProcessOutputParams } from "../protocol/descriptors.ts";
import type { ExitedEvent, OutputEvent } from "./options.ts";

/** A `process/output` notification as an event, or undefined when malformed. */
export function toOutputEvent(params: unknown): OutputEvent | undefined {
  if (!isProcessOutputParams(params)) return undefined;
  let data: Uint8Array;
  try {
    data = decodeBase64(params.chunk);
  } catch {
    return undefined;
  }
  return { processId: params.processId, stream: params.stream, data, seq: params.seq };
}

/** A `process/exited` notification as an event, or undefined when malformed. */
export function toExitedEvent(params: unknown): ExitedEvent | undefined {
  if (!isProcessExitedParams(params)) return undefined;
  const num = (v: unknown) => typeof v === "number" ? v : undefined;
  return {
    processId: params.processId,
    exitCode: params.exitCode,
    signal: params.signal ?? null,
    durationMs: params.durationMs,
    startedAtMs: num(params.startedAtMs),
    exitedAtMs: num(params.exitedAtMs),
    ...(typeof params.sandboxDenied === "boolean" ? { sandboxDenied: params.sandboxDenied } : {}),
  };
}
