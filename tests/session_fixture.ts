/**
 * Shared by the session tests: servers reached through the test sshd,
 * reading a process back through `process/read`, and finding what is left
 * of a command by a marker in its argv.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { shellQuote } from "../mod.ts";
import { eventually, isAlive, type Msg, serverCommand, TestServer } from "./harness.ts";
import type { SshFixture } from "./ssh_fixture.ts";

/** A fresh private session directory (mode 0700, as mkdtemp makes it) and its removal. */
export async function sessionDir(): Promise<[string, () => Promise<void>]> {
  const dir = await mkdtemp(join(tmpdir(), "es-sessions-"));
  return [dir, () => rm(dir, { recursive: true, force: true })];
}

/** The pids of live processes any of whose argv words contains `text`. */
export async function pidsMentioning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const words = (await readFile(`/proc/${name}/cmdline`, "utf8")).split("\0");
      if (words.some((w) => w.includes(text)) && await isAlive(Number(name))) {
        pids.push(Number(name));
      }
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
}

/** SIGKILL every live process whose argv mentions any of `texts`, and wait until none is left. */
export async function killAll(...texts: string[]): Promise<void> {
  const left = async () => (await Promise.all(texts.map(pidsMentioning))).flat();
  for (const pid of await left()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  await eventually(async () => (await left()).length === 0, 10_000, "every process to be gone");
}

/** A server started through `ssh`, speaking on ssh's stdio. */
export function sshServer(
  sshd: SshFixture,
  serverArgs: string[],
  command: string[] = serverCommand(),
): TestServer {
  const remote = [...command, ...serverArgs].map(shellQuote).join(" ");
  return new TestServer([], {
    command: ["ssh", ...sshd.sshArgs, sshd.destination, remote],
    ours: false,
  });
}

/** What `process/read` gave back of one process, read to its end. */
export interface ReadBack {
  /** Every chunk's text, in seq order. */
  text: string;
  /** Every seq read, in order. */
  seqs: number[];
  /** The exit code. */
  exitCode: number;
  /** The final result (Codex: `closed` true; v0: `exited` true). */
  last: Msg;
}

/** Read process `id` from `afterSeq` until its exit (v0) or close (Codex) was read. */
export async function readToEnd(s: TestServer, id: string, afterSeq = 0): Promise<ReadBack> {
  let text = "";
  const seqs: number[] = [];
  let after = afterSeq;
  while (true) {
    const r = await s.call("process/read", { processId: id, afterSeq: after, waitMs: 1000 });
    for (const c of r.chunks) {
      text += Buffer.from(c.chunk, "base64").toString();
      seqs.push(c.seq);
      after = c.seq;
    }
    if (r.closed === true || (r.closed === undefined && r.exited)) {
      return { text, seqs, exitCode: r.exitCode, last: r };
    }
  }
}

/** `n` lines `line-1` … `line-n`, each ended by a newline. */
export function numberedLines(n: number): string {
  return Array.from({ length: n }, (_, i) => `line-${i + 1}\n`).join("");
}

/** A shell command printing {@linkcode numberedLines}(n), one per `sleepS`, then exiting `code`. */
export function slowLines(n: number, sleepS: number, code: number): string {
  return `for i in $(seq 1 ${n}); do echo line-$i; sleep ${sleepS}; done; exit ${code}`;
}
