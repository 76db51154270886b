/**
 * The library in session mode against the real server: `connectSsh(host,
 * { resume: true })` rides out a SIGKILLed ssh client, and processes left
 * running on purpose (`ttlMs`) are listed and attached from a second
 * client, over ssh and over a websocket; at the end of their time to live
 * with nobody attached, their whole tree is gone, a setsid escapee too.
 */
import assert from "node:assert/strict";
import { ExecServerClient } from "../mod.ts";
import { eventually, serverCommand } from "./harness.ts";
import { sshdMissingReason, startSshd } from "./ssh_fixture.ts";
import { startTokenServer } from "./codex_cli_fixture.ts";
import {
  killAll,
  numberedLines,
  pidsMentioning,
  sessionDir,
  slowLines,
} from "./session_fixture.ts";

const missing = sshdMissingReason();
const TOKEN = "client-session-test-token-0123456789";
const decoder = new TextDecoder();

/** The pids of the local ssh clients whose command line mentions `text`. */
async function sshClients(text: string): Promise<number[]> {
  const pids = await pidsMentioning(text);
  const out: number[] = [];
  for (const pid of pids) {
    const argv0 = (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0")[0];
    if (argv0.split("/").pop() === "ssh") out.push(pid);
  }
  return out;
}

Deno.test({
  name: "client session mode over ssh: a SIGKILLed ssh is relaunched, every line once, the exit",
  ignore: missing !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const sshd = await startSshd();
    const [dir, removeDir] = await sessionDir();
    const problems: string[] = [];
    const [binary, ...binaryArgs] = serverCommand();
    const client = await ExecServerClient.connectSsh(sshd.destination, {
      sshArgs: sshd.sshArgs,
      binary,
      serverArgs: [...binaryArgs, "--session-dir", dir, "--session-grace-ms", "20000"],
      resume: true,
      onProblem: (m) => problems.push(m),
    });
    try {
      const p = await client.spawn({ argv: ["sh", "-c", slowLines(40, 0.05, 6)] });
      let text = "";
      let killed = false;
      for await (const chunk of p.output) {
        text += decoder.decode(chunk.data);
        if (!killed && text.includes("line-5\n")) {
          killed = true;
          const [ssh] = await sshClients(dir);
          assert.ok(ssh, "the ssh client was not found");
          Deno.kill(ssh, "SIGKILL");
        }
      }
      const exit = await p.wait();
      assert.equal(text, numberedLines(40));
      assert.equal(exit.exitCode, 6);
      assert.ok(problems.some((m) => /resumed session/.test(m)), problems.join("\n"));
      // The new link serves new work too.
      assert.equal((await client.run(["echo", "after"])).stdout, "after\n");
    } finally {
      await client.close();
      await sshd.stop();
      await killAll(dir);
      await removeDir();
    }
  },
});

/** Start a process that outlives its client, from a first client; close that client. */
async function detach(
  open: () => Promise<ExecServerClient>,
  argv: string[],
  ttlMs: number,
): Promise<{ sessionId: string; processId: string }> {
  const first = await open();
  try {
    assert.equal((first.capabilities.sessions as { ttl: boolean }).ttl, true);
    const p = await first.spawn({ argv, ttlMs });
    return { sessionId: first.sessionId!, processId: p.id };
  } finally {
    await first.close();
  }
}

/** Join the session from a second client: list, attach, read all from seq 1, exit. */
async function attachAll(
  join: () => Promise<ExecServerClient>,
  processId: string,
  expected: string,
  exitCode: number,
): Promise<void> {
  const second = await join();
  try {
    const listed = await second.list();
    assert.equal(listed.length, 1);
    assert.equal(listed[0].processId, processId);
    const handle = await second.attach(processId);
    const seqs: number[] = [];
    let text = "";
    for await (const chunk of handle.output) {
      seqs.push(chunk.seq);
      text += decoder.decode(chunk.data);
    }
    assert.equal(text, expected);
    assert.equal(seqs[0], 1);
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
    assert.equal((await handle.wait()).exitCode, exitCode);
  } finally {
    await second.close();
  }
}

const job = ["sh", "-c", `${slowLines(20, 0.05, 3)}`];

Deno.test({
  name: "client detach/list/attach over ssh: a second client reads the whole output and exit",
  ignore: missing !== undefined,
  sanitizeResources: false,
  fn: async () => {
    const sshd = await startSshd();
    const [dir, removeDir] = await sessionDir();
    const [binary, ...binaryArgs] = serverCommand();
    const ssh = (sessionId?: string) =>
      ExecServerClient.connectSsh(sshd.destination, {
        sshArgs: sshd.sshArgs,
        binary,
        serverArgs: [...binaryArgs, "--session-dir", dir, "--session-grace-ms", "500"],
        ...(sessionId ? { sessionId } : { resume: true }),
      });
    try {
      const { sessionId, processId } = await detach(() => ssh(), job, 30_000);
      await attachAll(() => ssh(sessionId), processId, numberedLines(20), 3);
    } finally {
      await sshd.stop();
      await killAll(dir);
      await removeDir();
    }
  },
});

Deno.test({
  name: "client detach/list/attach over a websocket: a second client reads the whole output",
  sanitizeResources: false,
  fn: async () => {
    const [server, stop] = await startTokenServer(TOKEN, ["--session-grace-ms", "500"]);
    const ws = (sessionId?: string) =>
      ExecServerClient.connectWebSocket(server.url, {
        token: TOKEN,
        ...(sessionId ? { sessionId } : { resume: true }),
      });
    try {
      const { sessionId, processId } = await detach(() => ws(), job, 30_000);
      await attachAll(() => ws(sessionId), processId, numberedLines(20), 3);
    } finally {
      await stop();
    }
  },
});

Deno.test({
  name: "detached process: at the end of its ttlMs with nobody attached, its tree is gone",
  sanitizeResources: false,
  fn: async () => {
    const [server, stop] = await startTokenServer(TOKEN, ["--session-grace-ms", "200"]);
    const marker = `ttl-marker-${crypto.randomUUID()}`;
    try {
      const client = await ExecServerClient.connectWebSocket(server.url, {
        token: TOKEN,
        resume: true,
      });
      // The escapee leaves the process group and the session of its parent.
      const script = `setsid sh -c 'sleep 300' ${marker}-escapee & echo started; sleep 300`;
      const p = await client.spawn({ argv: ["sh", "-c", script, marker], ttlMs: 1500 });
      for await (const chunk of p.output) if (decoder.decode(chunk.data).includes("started")) break;
      await eventually(async () => (await pidsMentioning(marker)).length === 2);
      await client.close();
      // Still there past the grace window: its own ttlMs keeps it.
      await new Promise((r) => setTimeout(r, 600));
      assert.equal((await pidsMentioning(marker)).length, 2);
      await eventually(
        async () => (await pidsMentioning(marker)).length === 0,
        15_000,
        "the tree to be killed at the end of its ttlMs",
      );
    } finally {
      await killAll(marker);
      await stop();
    }
  },
});

Deno.test({
  name: "a session opened on the websocket listener is taken over by a stdio server (ssh's way in)",
  sanitizeResources: false,
  fn: async () => {
    const [dir, removeDir] = await sessionDir();
    const [server, stop] = await startTokenServer(TOKEN, ["--session-dir", dir]);
    try {
      const { sessionId, processId } = await detach(
        () => ExecServerClient.connectWebSocket(server.url, { token: TOKEN, resume: true }),
        job,
        30_000,
      );
      const [command, ...args] = serverCommand();
      await attachAll(
        () => ExecServerClient.spawnStdio(command, [...args, "--session-dir", dir], { sessionId }),
        processId,
        numberedLines(20),
        3,
      );
    } finally {
      await stop();
      await removeDir();
    }
  },
});
