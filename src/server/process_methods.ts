/**
 * Parameter checking for the `process/*` methods: untrusted params in,
 * typed calls on the {@linkcode ProcessTable} out.
 *
 * @module
 */
import { decodeBase64, InvalidBase64Error } from "../protocol/base64.ts";
import { invalidParams, invalidRequest } from "../protocol/errors.ts";
import { Method, type ProcessStartParams } from "../protocol/methods.ts";
import {
  absolutePath,
  optionalBoolean,
  optionalNonNegativeInteger,
  paramsObject,
  requireBoolean,
  requireIntegerInRange,
  requireNonEmptyString,
  requireString,
  requireStringArray,
  requireStringRecord,
} from "../protocol/validate.ts";
import { ResultWithEffect } from "../rpc/peer.ts";
import type { ProcessTable } from "./process_table.ts";

/** A method handler: params in, result (or thrown RpcError) out. */
export type MethodHandler = (params: unknown) => unknown;

/** The longest `waitMs` or `graceMs` accepted: one hour. */
const MAX_WAIT_MS = 3_600_000;
/** The largest terminal dimension accepted. */
const MAX_TERMINAL_DIM = 65535;

function decodeChunk(text: string, field: string): Uint8Array {
  try {
    return decodeBase64(text);
  } catch (err) {
    if (err instanceof InvalidBase64Error) throw invalidParams(`${field}: ${err.message}`);
    throw err;
  }
}

/** Read and check `process/start` params. */
export function parseStartParams(params: unknown): ProcessStartParams {
  const p = paramsObject(params, Method.ProcessStart);
  const processId = requireNonEmptyString(p, "processId");
  const argv = requireStringArray(p, "argv");
  if (argv[0] === "") throw invalidParams("argv[0] must not be empty: it names the program");
  const cwd = absolutePath(requireString(p, "cwd"), "cwd");
  const env = requireStringRecord(p, "env");
  const tty = requireBoolean(p, "tty");
  let arg0: string | null = null;
  if (p.arg0 !== undefined && p.arg0 !== null) {
    if (typeof p.arg0 !== "string") {
      throw invalidParams(`arg0 must be a string or null, got ${JSON.stringify(p.arg0)}`);
    }
    arg0 = p.arg0;
  }
  if (tty && arg0 !== null && arg0 !== argv[0]) {
    throw invalidParams(
      `arg0 ${JSON.stringify(arg0)} cannot differ from argv[0] for a tty process`,
    );
  }
  const sandbox = p.sandbox;
  if (sandbox !== undefined && sandbox !== null) {
    const mode = typeof sandbox === "object" && !Array.isArray(sandbox)
      ? (sandbox as Record<string, unknown>).mode
      : undefined;
    if (mode !== "none") {
      throw invalidRequest(
        `unsupported sandbox mode ${JSON.stringify(mode ?? sandbox)}: only "none" is supported`,
      );
    }
  }
  const pipeStdin = optionalBoolean(p, "pipeStdin", false);
  let size: { rows: number; cols: number } | undefined;
  if (p.size !== undefined && p.size !== null) {
    const s = paramsObject(p.size, "size");
    size = {
      rows: requireIntegerInRange(s, "rows", 1, MAX_TERMINAL_DIM),
      cols: requireIntegerInRange(s, "cols", 1, MAX_TERMINAL_DIM),
    };
  }
  return { processId, argv, cwd, env, tty, arg0, pipeStdin, size };
}

/** The `process/*` method handlers of one connection. */
export function processMethods(table: ProcessTable): Map<string, MethodHandler> {
  const handlers = new Map<string, MethodHandler>();
  handlers.set(Method.ProcessStart, async (params) => {
    const start = parseStartParams(params);
    const announce = await table.start(start);
    return new ResultWithEffect({ processId: start.processId }, announce);
  });
  handlers.set(Method.ProcessRead, (params) => {
    const p = paramsObject(params, Method.ProcessRead);
    const id = requireString(p, "processId");
    const afterSeq = optionalNonNegativeInteger(p, "afterSeq") ?? 0;
    const maxBytes = optionalNonNegativeInteger(p, "maxBytes");
    const waitMs = optionalNonNegativeInteger(p, "waitMs", MAX_WAIT_MS) ?? 0;
    return table.read(id, afterSeq, maxBytes, waitMs);
  });
  handlers.set(Method.ProcessWrite, async (params) => {
    const p = paramsObject(params, Method.ProcessWrite);
    const id = requireString(p, "processId");
    const data = decodeChunk(requireString(p, "chunk"), "chunk");
    await table.write(id, data);
    return { accepted: true };
  });
  handlers.set(Method.ProcessTerminate, (params) => {
    const p = paramsObject(params, Method.ProcessTerminate);
    const id = requireString(p, "processId");
    const graceMs = optionalNonNegativeInteger(p, "graceMs", MAX_WAIT_MS);
    return { running: table.terminate(id, graceMs) };
  });
  handlers.set(Method.ProcessCloseStdin, async (params) => {
    const p = paramsObject(params, Method.ProcessCloseStdin);
    await table.closeStdin(requireString(p, "processId"));
    return {};
  });
  handlers.set(Method.ProcessResize, (params) => {
    const p = paramsObject(params, Method.ProcessResize);
    const id = requireString(p, "processId");
    table.resize(id, {
      rows: requireIntegerInRange(p, "rows", 1, MAX_TERMINAL_DIM),
      cols: requireIntegerInRange(p, "cols", 1, MAX_TERMINAL_DIM),
    });
    return {};
  });
  handlers.set(Method.ProcessSignal, (params) => {
    const p = paramsObject(params, Method.ProcessSignal);
    const id = requireString(p, "processId");
    return table.signal(id, requireString(p, "signal"));
  });
  return handlers;
}
