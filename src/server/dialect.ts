/**
 * What differs between the two dialects once a process runs: how its exit
 * is told and what `process/read` answers. The session picks one at
 * `initialize`; the process table asks it and knows no dialect itself.
 *
 * @module
 */
import { CodexNotificationNames, type CodexProcessReadResult } from "../protocol/codex.ts";
import type { ProcessReadResult } from "../protocol/methods.ts";
import type { TimedExit } from "../process/controller.ts";
import type { OutputSlice } from "./output_buffer.ts";
import { exitedNote, readResult } from "./process_notes.ts";

/** A dialect's answers about one process. */
export interface ProcessDialect {
  /** `v0` or `codex`, for logs. */
  readonly name: string;
  /**
   * The notifications that tell a process's exit, in order. `nextSeq`
   * takes a number from the process's output sequence.
   */
  exitNotes(
    processId: string,
    startedAtMs: number,
    exit: TimedExit,
    nextSeq: () => number,
  ): string[];
  /** The `process/read` result for a slice of retained output. */
  readResult(slice: OutputSlice, exit: TimedExit | undefined): unknown;
}

/** exec-server.v0: one `process/exited` with timing; the read result as PROTOCOL.md. */
export const V0_DIALECT: ProcessDialect = {
  name: "v0",
  exitNotes: (processId, startedAtMs, exit) => [exitedNote(processId, startedAtMs, exit)],
  readResult: (slice, exit): ProcessReadResult => readResult(slice, exit),
};

/**
 * The Codex CLI's dialect: `exited` and then `closed`, both numbered in the
 * output's sequence; `closed` is what the CLI waits for.
 */
export const CODEX_DIALECT: ProcessDialect = {
  name: "codex",
  exitNotes: (processId, _startedAtMs, exit, nextSeq) => [
    JSON.stringify({
      method: "process/exited",
      params: {
        processId,
        seq: nextSeq(),
        exitCode: exit.exitCode,
        sandboxDenied: exit.sandboxDenied ?? false,
        // Not read by the CLI; this project's client in session mode keeps them.
        signal: exit.signal,
        durationMs: exit.durationMs,
      },
    }),
    JSON.stringify({
      method: CodexNotificationNames.processClosed,
      params: { processId, seq: nextSeq() },
    }),
  ],
  readResult: (slice, exit): CodexProcessReadResult => {
    const v0 = readResult(slice, exit);
    return {
      chunks: v0.chunks,
      nextSeq: v0.nextSeq,
      exited: v0.exited,
      exitCode: v0.exitCode,
      closed: v0.exited,
      failure: null,
      sandboxDenied: (v0.exited && exit?.sandboxDenied) || false,
      ...(v0.exited ? { signal: v0.signal, durationMs: v0.durationMs } : {}),
    };
  },
};
