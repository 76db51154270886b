/**
 * One process of a connection as the table tracks it: its id, its control
 * (once started), what it retained, and what is waiting to be sent.
 *
 * @module
 */
import type { ControlledProcess, TimedExit } from "../process/controller.ts";
import { OutputBuffer } from "./output_buffer.ts";
import { OutputMerge } from "./output_merge.ts";
import type { ProcessListEntry } from "../protocol/sessions.ts";

/** A process of one connection, from the reservation of its id on. */
export class ManagedProcess {
  /** The client's id for it. */
  readonly id: string;
  /** Whether it runs on a terminal. */
  readonly tty: boolean;
  /** Its command line, for `process/list`. */
  readonly argv: readonly string[];
  /** **[ext]** How long it may run with nobody attached to its session; undefined: the grace window. */
  readonly ttlMs: number | undefined;
  /** What `process/read` returns. */
  readonly output: OutputBuffer;
  /** The id as a JSON string, serialized once for every notification. */
  readonly idJson: string;
  /** Set once it started. */
  proc: ControlledProcess | undefined;
  /** Set once its exit has been reported. */
  exit: TimedExit | undefined;
  /** Set when terminate arrives while the process is still starting. */
  killWhenStarted: { graceMs?: number } | undefined;
  /** Output notifications wait until the start response has been sent. */
  announced = false;
  /** Notifications held until then. */
  pendingNotes: string[] = [];
  /** Output read since the last flush, merged into one chunk (same stream). */
  readonly merge: OutputMerge = new OutputMerge();
  /** Reads waiting for output or the exit. */
  waiters: Set<() => void> = new Set();

  /** @param capBytes the most output bytes retained for reading */
  constructor(
    id: string,
    start: { tty: boolean; argv: readonly string[]; ttlMs?: number },
    capBytes: number,
  ) {
    this.id = id;
    this.idJson = JSON.stringify(id);
    this.tty = start.tty;
    this.argv = start.argv;
    this.ttlMs = start.ttlMs;
    this.output = new OutputBuffer(capBytes);
  }

  /** Starting or running: its exit has not been reported yet. */
  get running(): boolean {
    return this.exit === undefined;
  }

  /** Wake every waiting read. */
  wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const w of waiters) w();
  }
}

/** **[ext]** What `process/list` tells of `mp`. */
export function listEntry(mp: ManagedProcess): ProcessListEntry {
  const exit = mp.exit;
  return {
    processId: mp.id,
    argv: [...mp.argv],
    tty: mp.tty,
    state: exit ? "exited" : mp.proc ? "running" : "starting",
    exitCode: exit ? exit.exitCode : null,
    signal: exit?.signal ?? null,
    firstSeq: mp.output.firstSeq,
    nextSeq: mp.output.nextSeq,
    startedAtMs: mp.proc ? mp.proc.startedAtMs : null,
    exitedAtMs: exit ? exit.exitedAtMs : null,
    ttlMs: mp.ttlMs ?? null,
  };
}
