/**
 * The differential test's `process/*` cases (see tests/codex_diff_fixture.ts):
 * pipes and a tty, stdin writes, terminate and signal, bad params, and the
 * CLI's sandbox object (well formed and malformed) on processes and files.
 * Notifications are compared by method and shape, never by timing: each
 * process's are collected once its `process/closed` has come.
 */
import { codexWorkspaceWrite } from "./sandbox_fixture.ts";
import * as fsp from "node:fs/promises";
import { join } from "node:path";
import type { CaseCtx, DiffCase } from "./codex_diff_fixture.ts";
import { b64, type Msg, unb64 } from "./harness.ts";

/** A `process/start` as the CLI sends it, `extra` laid over it. */
export function startParams(c: CaseCtx, processId: string, cmd: string, extra: Msg = {}): Msg {
  return {
    processId,
    metadata: { threadId: "0199a8d2-5b6e-7c41-9a3f-2f0e8c1d4b7a", toolCallId: "call_1" },
    argv: ["/bin/sh", "-c", cmd],
    cwd: c.u(),
    env: { TERM: "dumb", PATH: "/usr/bin:/bin" },
    tty: false,
    pipeStdin: false,
    arg0: null,
    sandbox: null,
    enforceManagedNetwork: false,
    managedNetwork: null,
    ...extra,
  };
}

/** The processes whose start failed, per case context: nothing to wait for. */
const failedStarts = new WeakMap<CaseCtx, Set<string>>();

/** Start a process, recording the answer exactly (`label` defaults to the id). */
async function start(c: CaseCtx, id: string, cmd: string, extra: Msg = {}, label = `start ${id}`) {
  const answer = await c.req(label, "process/start", startParams(c, id, cmd, extra), ["result"]);
  if (answer.error) {
    if (!failedStarts.has(c)) failedStarts.set(c, new Set());
    failedStarts.get(c)!.add(id);
  }
  return answer;
}

/**
 * Wait for `process/closed` of `id`, then record its notifications: their
 * methods in order (runs of output as one), the text of each stream, the
 * `exited` params and how the numbers follow each other.
 */
export async function finish(c: CaseCtx, id: string): Promise<void> {
  const mine = (m: Msg) => typeof m.method === "string" && m.params?.processId === id;
  if (failedStarts.get(c)?.has(id)) {
    c.record(`${id}: not started`, {});
    return;
  }
  await c.waitFor((m) => mine(m) && m.method === "process/closed", `process/closed of ${id}`);
  const notes = c.server.messages.filter(mine);
  const text = (stream: string) =>
    notes.filter((m) => m.method === "process/output" && m.params.stream === stream)
      .map((m) => unb64(m.params.chunk)).join("");
  const outputs = notes.filter((m) => m.method === "process/output");
  const exited = notes.find((m) => m.method === "process/exited");
  const closed = notes.find((m) => m.method === "process/closed");
  const at = (m: Msg | undefined) => m === undefined ? -1 : notes.indexOf(m);
  c.record(`${id}: notifications`, {
    methods: [...new Set(notes.map((m) => m.method))].sort(),
    stdout: text("stdout"),
    stderr: text("stderr"),
    pty: text("pty"),
  }, true);
  const seqs = outputs.map((m) => m.params.seq);
  c.record(`${id}: order`, {
    outputBeforeExited: outputs.every((m) => at(m) < at(exited)),
    closedLast: at(closed) === notes.length - 1,
    outputSeqsFromOne: seqs.every((s, i) => s === i + 1),
    exitedSeqNext: exited?.params.seq === seqs.length + 1,
    closedSeqNext: closed?.params.seq === exited?.params.seq + 1,
  }, true);
  const { seq: _s, durationMs: _d, ...exitParams } = exited?.params ?? {};
  c.record(`${id}: exited`, exitParams, ["exitCode", "sandboxDenied"]);
  c.record(`${id}: an output note`, outputs[0]?.params ?? null);
}

/** A `process/read` answer with its chunks as text per stream (chunking is timing). */
async function read(c: CaseCtx, label: string, params: Msg): Promise<void> {
  const answer = await c.server.request("process/read", params);
  const chunks: Msg[] | undefined = answer.result?.chunks;
  if (!chunks) {
    c.record(label, { error: answer.error });
    return;
  }
  const { nextSeq: _n, ...result } = answer.result;
  const text = (stream: string) =>
    chunks.filter((k) => k.stream === stream).map((k) => unb64(k.chunk)).join("");
  c.record(label, {
    result: { ...result, chunks: chunks.slice(0, 1) },
    stdout: text("stdout"),
    stderr: text("stderr"),
    nextSeqAfterAll: answer.result.nextSeq === (chunks.at(-1)?.seq ?? 0) + 3,
  }, ["stdout", "stderr", "result.exited", "result.exitCode", "result.closed"]);
}

const pipes: DiffCase = {
  name: "process pipes",
  async run(c) {
    await start(c, "p1", "printf 'out1\\nout2\\n'; printf err >&2; exit 3");
    await finish(c, "p1");
    await read(c, "read from 0", { processId: "p1", afterSeq: 0, maxBytes: null, waitMs: 0 });
    await read(c, "read from 99", { processId: "p1", afterSeq: 99, waitMs: 0 });
    await read(c, "read, no afterSeq", { processId: "p1" });
    await read(c, "read an unknown process", { processId: "nope", afterSeq: 0 });
    await read(c, "read, afterSeq not a number", { processId: "p1", afterSeq: "x" });
    await c.req("terminate after exit", "process/terminate", { processId: "p1" }, ["result"]);
    await c.req("terminate unknown", "process/terminate", { processId: "nope" }, ["result"]);
    await start(c, "env", 'printf \'%s:%s\' "$PWD" "$TERM"');
    await finish(c, "env");
    await start(c, "arg0", "", { argv: ["/bin/sh", "-c", 'printf "$0"'], arg0: "named" });
    await finish(c, "arg0");
  },
};

const tty: DiffCase = {
  name: "process tty",
  async run(c) {
    await start(c, "t1", "printf 'tty-ok\\n'; [ -t 1 ] && printf yes", { tty: true });
    await finish(c, "t1");
    await start(c, "t2", 'read line; printf "got:$line"', { tty: true, pipeStdin: true });
    await c.req("write to the tty", "process/write", {
      processId: "t2",
      chunk: b64("abc\n"),
      writeId: "w1",
    }, ["result"]);
    await finish(c, "t2");
  },
};

const stdin: DiffCase = {
  name: "process stdin",
  async run(c) {
    const write = (label: string, processId: string, text: string, writeId: unknown) =>
      c.req(label, "process/write", { processId, chunk: b64(text), writeId }, ["result"]);
    await start(c, "cat", "head -n 2", { pipeStdin: true });
    await write("write", "cat", "one\n", "w1");
    await write("the same writeId again", "cat", "one\n", "w1");
    await write("another", "cat", "two\n", "w2");
    await finish(c, "cat");
    await write("after exit", "cat", "x", "w3");
    await write("unknown process", "nope", "x", "w4");
    await c.req("bad base64", "process/write", { processId: "cat", chunk: "%%%" });
    await c.req("no chunk", "process/write", { processId: "cat" });
    await start(c, "nostdin", "sleep 30");
    await write("without pipeStdin", "nostdin", "x", "w5");
    await write("writeId null", "nostdin", "x", null);
    await write("writeId a number", "nostdin", "x", 6);
    await c.req("no writeId", "process/write", { processId: "nostdin", chunk: b64("x") });
    await c.req("terminate", "process/terminate", { processId: "nostdin" }, ["result"]);
    await finish(c, "nostdin");
  },
};

/** Wait for a process's first output (its shell is set up: a trap is in place). */
function ready(c: CaseCtx, id: string): Promise<Msg> {
  return c.waitFor(
    (m) => m.method === "process/output" && m.params.processId === id,
    `the first output of ${id}`,
  );
}

const terminate: DiffCase = {
  name: "process terminate and signal",
  async run(c) {
    await start(c, "s1", "sleep 30");
    await c.req("terminate", "process/terminate", { processId: "s1" }, ["result"]);
    await finish(c, "s1");
    await c.req("terminate again", "process/terminate", { processId: "s1" }, ["result"]);
    const trap = "trap 'echo trapped; exit 7' INT; echo ready; read line";
    await start(c, "s2", trap, { pipeStdin: true });
    await ready(c, "s2");
    await c.req("signal interrupt", "process/signal", {
      processId: "s2",
      signal: "interrupt",
    }, ["result"]);
    await finish(c, "s2");
    await start(c, "s3", "sleep 30");
    await c.req("an unknown signal", "process/signal", { processId: "s3", signal: "bogus" });
    await c.req("a POSIX signal name", "process/signal", { processId: "s3", signal: "SIGCONT" });
    await c.req("signal an unknown process", "process/signal", {
      processId: "nope",
      signal: "interrupt",
    }, ["result"]);
    await c.req("signal an exited process", "process/signal", {
      processId: "s2",
      signal: "interrupt",
    }, ["result"]);
    await c.req("terminate s3", "process/terminate", { processId: "s3" }, ["result"]);
    await finish(c, "s3");
    await start(c, "s4", "echo ready; exec sleep 30");
    await ready(c, "s4");
    await c.req("interrupt, no trap", "process/signal", {
      processId: "s4",
      signal: "interrupt",
    }, ["result"]);
    await finish(c, "s4");
    await c.req("terminate, no processId", "process/terminate", {});
  },
};

const startErrors: DiffCase = {
  name: "process/start bad params",
  async setup(tree) {
    await fsp.writeFile(join(tree, "plain"), "x");
  },
  async run(c) {
    const bad = (label: string, extra: Msg) =>
      c.req(label, "process/start", startParams(c, label.replaceAll(" ", "-"), "true", extra));
    await bad("no argv", { argv: undefined });
    await bad("empty argv", { argv: [] });
    await bad("argv not an array", { argv: "ls" });
    await bad("argv with a number", { argv: ["/bin/echo", 1] });
    await bad("no cwd", { cwd: undefined });
    await bad("missing cwd", { cwd: c.u("missing") });
    await bad("missing program", { argv: [c.p("no-such-program")] });
    await bad("a program that is a directory", { argv: [c.p()] });
    await bad("a program below a file", { argv: [c.p("plain/x")] });
    await bad("a program not executable", { argv: [c.p("plain")] });
    await bad("cwd a file", { cwd: c.u("plain") });
    await bad("tty not a boolean", { tty: "yes" });
    await bad("env not an object", { env: ["A=1"] });
    await bad("env value a number", { env: { A: 1 } });
    await bad("no env", { env: undefined });
    await bad("bad envPolicy inherit", {
      envPolicy: { inherit: "some", ignoreDefaultExcludes: false, exclude: [], set: {} },
    });
    await bad("enforceManagedNetwork", { enforceManagedNetwork: true });
    await c.req("no processId", "process/start", { ...startParams(c, "x", "true"), processId: 7 });
    await start(c, "dup", "sleep 30");
    await c.req("a duplicate processId", "process/start", startParams(c, "dup", "true"));
    await c.req("terminate dup", "process/terminate", { processId: "dup" }, ["result"]);
    await finish(c, "dup");
  },
};

/** The sandbox the CLI sends under `-s workspace-write` (tests/sandbox_fixture.ts). */
export const workspaceWrite = (ws: string, home: string): Msg => codexWorkspaceWrite(ws, home);

const sandboxed: DiffCase = {
  name: "sandbox",
  async setup(tree) {
    await fsp.mkdir(join(tree, "ws/.git"), { recursive: true });
    await fsp.mkdir(join(tree, "outside"));
    await fsp.writeFile(join(tree, "ws/.git/config"), "[core]\n");
    await fsp.writeFile(join(tree, "outside/o.txt"), "o");
  },
  async run(c) {
    const sandbox = workspaceWrite(c.p("ws"), c.home);
    const inWs = { sandbox, cwd: c.u("ws") };
    await start(c, "in", "printf in > in.txt && cat ../outside/o.txt", inWs);
    await finish(c, "in");
    await start(c, "out", "printf x > ../outside/x.txt", inWs);
    await finish(c, "out");
    await start(c, "git", "printf x > .git/config", inWs);
    await finish(c, "git");
    const fs = (label: string, method: string, params: Msg) =>
      c.req(label, method, { ...params, sandbox }, ["result"]);
    await fs("write inside", "fs/writeFile", { path: c.u("ws/f.txt"), dataBase64: b64("f") });
    await fs("write outside", "fs/writeFile", { path: c.u("outside/f.txt"), dataBase64: b64("") });
    await fs("write .git", "fs/writeFile", { path: c.u("ws/.git/x"), dataBase64: b64("") });
    await fs("read outside", "fs/readFile", { path: c.u("outside/o.txt") });
    await fs("mkdir outside", "fs/createDirectory", { path: c.u("outside/d"), recursive: true });
    await fs("remove outside", "fs/remove", {
      path: c.u("outside/o.txt"),
      recursive: false,
      force: false,
    });
    const malformed: [string, unknown][] = [
      ["an empty object", {}],
      ["a string", "workspace-write"],
      ["unknown permissions type", { ...sandbox, permissions: { type: "bogus" } }],
      ["no file_system", { ...sandbox, permissions: { type: "managed", network: "restricted" } }],
      ["no cwd", { ...sandbox, cwd: undefined }],
    ];
    for (const [label, bad] of malformed) {
      // One that starts is waited for: none is left running when the server goes.
      const started = await start(c, label, "true", { sandbox: bad }, `start: ${label}`);
      if (started.result) await finish(c, label);
      await c.req(`readFile: ${label}`, "fs/readFile", { path: c.u("ws/f.txt"), sandbox: bad });
    }
  },
};

/** The process cases. */
export const PROCESS_CASES: DiffCase[] = [pipes, tty, stdin, terminate, startErrors, sandboxed];
