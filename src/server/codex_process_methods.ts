/**
 * The `process/*` methods in the Codex CLI's dialect: the same process
 * table, with the start params, results and statuses that dialect has
 * (see ../../docs/protocol.md, "The Codex dialect").
 *
 * @module
 */
import process from "node:process";
import { decodeBase64, InvalidBase64Error } from "../protocol/base64.ts";
import type { CodexProcessStartResult, CodexProcessWriteResult } from "../protocol/codex.ts";
import { Requests } from "../protocol/descriptors.ts";
import { buildEnvironment, checkEnvPolicy } from "../protocol/env_policy.ts";
import { ErrorCode, invalidParams, invalidRequest, RpcError } from "../protocol/errors.ts";
import { checkCodexSandbox, resolveCodexSandbox } from "../protocol/codex_sandbox.ts";
import { type CheckedStart, checkStartParams } from "../protocol/spawn_rules.ts";
import { optionalNonNegativeInteger, paramsObject, requireString } from "../protocol/validate.ts";
import { ResultWithEffect } from "../rpc/peer.ts";
import { DEFAULT_PATH_ENV } from "./environment_info.ts";
import type { MethodHandler } from "./method_handlers.ts";
import type { ProcessTable } from "./process_table.ts";

/** The longest `waitMs` or `graceMs` accepted: one hour. */
const MAX_WAIT_MS = 3_600_000;
/** Write ids remembered per process, for idempotent retries. */
const WRITE_IDS_KEPT = 256;
/** Processes whose write ids are remembered; the least recently written is forgotten first. */
const WRITE_ID_PROCESSES_KEPT = 256;

/**
 * The `sandboxType` of a sandboxed start. The CLI 0.171 reads it into a
 * closed set (none, macosSeatbelt, linuxSeccomp, windowsRestrictedToken,
 * windowsMxc) and fails the command on any other name ("unknown variant");
 * `linuxSeccomp` is its only name for the Linux sandbox, which upstream
 * builds on bubblewrap as this server does (this server adds no seccomp
 * filter: see docs/sandbox.md).
 */
const CODEX_SANDBOX_TYPE = "linuxSeccomp";

/**
 * The `data.kind` of a spawn failure, by errno, as upstream names them:
 * not found (a missing program or cwd), permission denied, else failed.
 */
function spawnKind(errno: string | undefined): string {
  if (errno === "ENOENT") return "spawnNotFound";
  if (errno === "EACCES" || errno === "EPERM") return "spawnPermissionDenied";
  return "spawnFailed";
}

/**
 * Check a Codex `process/start`: its sandbox first (strictly: what cannot
 * be enforced is refused), v0's rules for the common fields, then the
 * environment built by `envPolicy`. The sandbox's `tmpdir` is the built
 * environment's `TMPDIR`.
 */
function codexStart(params: unknown): CheckedStart {
  const p = paramsObject(params, Requests.processStart.method);
  const sandbox = checkCodexSandbox(p.sandbox);
  if (p.enforceManagedNetwork === true) {
    throw invalidRequest(
      "enforceManagedNetwork is not supported: this server has no managed network proxy",
    );
  }
  // The CLI sends it only to an executor announcing networkProxyLaunch; a
  // proxy that was asked for is refused rather than silently not started.
  if (p.networkProxy !== undefined && p.networkProxy !== null) {
    throw invalidRequest(
      "networkProxy is not supported: this server cannot launch a managed network proxy",
    );
  }
  const policy = checkEnvPolicy(p.envPolicy);
  const start = checkStartParams({ ...p, sandbox: undefined });
  start.env = policy
    ? buildEnvironment(process.env, policy, start.env)
    : { ...(start.env.PATH === undefined ? DEFAULT_PATH_ENV : {}), ...start.env };
  start.sandbox = sandbox ? resolveCodexSandbox(sandbox, start.env.TMPDIR) : null;
  return start;
}

/** A spawn failure with the `data.kind` the CLI reads. */
function spawnFailure(err: unknown): unknown {
  if (!(err instanceof RpcError) || err.code !== ErrorCode.InternalError) return err;
  const data = (err.data ?? {}) as { errno?: string };
  return new RpcError(err.code, err.message, { ...data, kind: spawnKind(data.errno) });
}

/** Remembers recent write ids per process. */
class WriteIds {
  #seen = new Map<string, Set<string>>();

  /** False when `writeId` was seen for `processId` before. */
  first(processId: string, writeId: unknown): boolean {
    if (writeId === undefined || writeId === null) return true;
    const key = String(writeId);
    let ids = this.#seen.get(processId);
    // Re-inserted on every use, so the map's order is least recently written first.
    this.#seen.delete(processId);
    this.#seen.set(processId, ids ??= new Set());
    if (this.#seen.size > WRITE_ID_PROCESSES_KEPT) {
      this.#seen.delete(this.#seen.keys().next().value!);
    }
    if (ids.has(key)) return false;
    ids.add(key);
    if (ids.size > WRITE_IDS_KEPT) ids.delete(ids.values().next().value!);
    return true;
  }
}

async function codexWrite(
  table: ProcessTable,
  ids: WriteIds,
  params: unknown,
): Promise<CodexProcessWriteResult> {
  const p = paramsObject(params, Requests.processWrite.method);
  const id = requireString(p, "processId");
  let data: Uint8Array;
  try {
    data = decodeBase64(requireString(p, "chunk"));
  } catch (err) {
    if (err instanceof InvalidBase64Error) throw invalidParams(`chunk: ${err.message}`);
    throw err;
  }
  if (!table.has(id)) return { status: "unknownProcess" };
  if (!ids.first(id, p.writeId)) return { status: "accepted" };
  try {
    await table.write(id, data);
    return { status: "accepted" };
  } catch (err) {
    if (err instanceof RpcError && err.code === ErrorCode.InvalidRequest) {
      return { status: "stdinClosed" };
    }
    throw err;
  }
}

/** The `process/*` handlers of a Codex-dialect session. */
export function codexProcessMethods(table: ProcessTable): Map<string, MethodHandler> {
  const ids = new WriteIds();
  const handlers = new Map<string, MethodHandler>();
  handlers.set(Requests.processStart.method, async (params) => {
    const start = codexStart(params);
    let announce: () => void;
    try {
      announce = await table.start(start);
    } catch (err) {
      throw spawnFailure(err);
    }
    const result: CodexProcessStartResult = {
      processId: start.processId,
      sandboxType: start.sandbox ? CODEX_SANDBOX_TYPE : "none",
    };
    return new ResultWithEffect(result, announce);
  });
  handlers.set(Requests.processRead.method, (params) => {
    const p = paramsObject(params, Requests.processRead.method);
    return table.read(
      requireString(p, "processId"),
      optionalNonNegativeInteger(p, "afterSeq") ?? 0,
      optionalNonNegativeInteger(p, "maxBytes"),
      optionalNonNegativeInteger(p, "waitMs", MAX_WAIT_MS) ?? 0,
    );
  });
  handlers.set(Requests.processWrite.method, (params) => codexWrite(table, ids, params));
  handlers.set(Requests.processTerminate.method, (params) => {
    const p = paramsObject(params, Requests.processTerminate.method);
    const graceMs = optionalNonNegativeInteger(p, "graceMs", MAX_WAIT_MS);
    return { running: table.terminate(requireString(p, "processId"), graceMs) };
  });
  handlers.set(Requests.processSignal.method, (params) => {
    const p = paramsObject(params, Requests.processSignal.method);
    const id = requireString(p, "processId");
    const signal = requireString(p, "signal");
    try {
      table.signal(id, signal);
    } catch (err) {
      // As upstream: signalling a process that is unknown or has exited is no
      // error (a bad signal name still is, and so is one still starting).
      const gone = err instanceof RpcError && err.code === ErrorCode.InvalidRequest &&
        !table.isRunning(id);
      if (!gone) throw err;
    }
    return {};
  });
  return handlers;
}
