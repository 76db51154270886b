/**
 * Parameter checking for the `process/*` methods: untrusted params in,
 * typed calls on the {@linkcode ProcessTable} out.
 *
 * @module
 */
import { decodeBase64, InvalidBase64Error } from "../protocol/base64.ts";
import { invalidParams } from "../protocol/errors.ts";
import { Requests } from "../protocol/descriptors.ts";
import type { ProcessStartResult } from "../protocol/methods.ts";
import { checkStartParams, checkTerminalSize } from "../protocol/spawn_rules.ts";
import { optionalNonNegativeInteger, paramsObject, requireString } from "../protocol/validate.ts";
import { readTtlMs } from "../protocol/sessions.ts";
import { ResultWithEffect } from "../rpc/peer.ts";
import { addHandler, type MethodHandler } from "./method_handlers.ts";
import type { ProcessTable } from "./process_table.ts";

export type { MethodHandler } from "./method_handlers.ts";

/** The longest `waitMs` or `graceMs` accepted: one hour. */
const MAX_WAIT_MS = 3_600_000;

function decodeChunk(text: string, field: string): Uint8Array {
  try {
    return decodeBase64(text);
  } catch (err) {
    if (err instanceof InvalidBase64Error) throw invalidParams(`${field}: ${err.message}`);
    throw err;
  }
}

/** What a connection's `process/*` methods know of its session. */
export interface ProcessMethodOptions {
  /** Set for a resumable session: processes may ask for a `ttlMs` up to this. */
  maxTtlMs?: number;
}

/** The `process/*` method handlers of one connection. */
export function processMethods(
  table: ProcessTable,
  opts: ProcessMethodOptions = {},
): Map<string, MethodHandler> {
  const handlers = new Map<string, MethodHandler>();
  addHandler(handlers, Requests.processStart, async (params) => {
    const start = checkStartParams(params);
    const p = params as Record<string, unknown>;
    const ttlMs = readTtlMs(p, opts.maxTtlMs !== undefined, opts.maxTtlMs ?? 0);
    const announce = await table.start(start, ttlMs);
    const result: ProcessStartResult = start.sandbox
      ? { processId: start.processId, sandbox: "bubblewrap" }
      : { processId: start.processId };
    return new ResultWithEffect(result, announce);
  });
  addHandler(handlers, Requests.processRead, (params) => {
    const p = paramsObject(params, Requests.processRead.method);
    const id = requireString(p, "processId");
    const afterSeq = optionalNonNegativeInteger(p, "afterSeq") ?? 0;
    const maxBytes = optionalNonNegativeInteger(p, "maxBytes");
    const waitMs = optionalNonNegativeInteger(p, "waitMs", MAX_WAIT_MS) ?? 0;
    return table.read(id, afterSeq, maxBytes, waitMs);
  });
  addHandler(handlers, Requests.processList, () => ({ processes: table.list() }));
  addHandler(handlers, Requests.processWrite, async (params) => {
    const p = paramsObject(params, Requests.processWrite.method);
    const id = requireString(p, "processId");
    const data = decodeChunk(requireString(p, "chunk"), "chunk");
    await table.write(id, data);
    return { accepted: true };
  });
  addHandler(handlers, Requests.processTerminate, (params) => {
    const p = paramsObject(params, Requests.processTerminate.method);
    const id = requireString(p, "processId");
    const graceMs = optionalNonNegativeInteger(p, "graceMs", MAX_WAIT_MS);
    return { running: table.terminate(id, graceMs) };
  });
  addHandler(handlers, Requests.processCloseStdin, async (params) => {
    const p = paramsObject(params, Requests.processCloseStdin.method);
    await table.closeStdin(requireString(p, "processId"));
    return {};
  });
  addHandler(handlers, Requests.processResize, (params) => {
    const p = paramsObject(params, Requests.processResize.method);
    const id = requireString(p, "processId");
    table.resize(id, checkTerminalSize(p));
    return {};
  });
  addHandler(handlers, Requests.processSignal, (params) => {
    const p = paramsObject(params, Requests.processSignal.method);
    const id = requireString(p, "processId");
    return table.signal(id, requireString(p, "signal"));
  });
  return handlers;
}
