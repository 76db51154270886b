/**
 * Sessions that outlive an ssh connection, through the real test sshd: the
 * ssh client is killed mid-command (a dropped link), a new `ssh host
 * exec-server` resumes the session, and everything the command printed
 * arrives once and in order, its exit and close too. Afterwards nothing of
 * the command or of the server that held it is left. Also v0's detached
 * processes: started on one ssh connection, listed and read on another.
 */
import assert from "node:assert/strict";
import { eventually, nodeServerCommand, serverCommand } from "./harness.ts";
import { sshdMissingReason, startSshd } from "./ssh_fixture.ts";
import {
  numberedLines,
  pidsMentioning,
  readToEnd,
  sessionDir,
  slowLines,
  sshServer,
} from "./session_fixture.ts";

const missing = sshdMissingReason();
const builds: [string, () => string[]][] = [
  ["deno", serverCommand],
  ["node", nodeServerCommand],
];

for (const [runtime, command] of builds) {
  Deno.test({
    name:
      `session over ssh (${runtime}): a killed ssh, a new ssh resumes, every line once, exit, close`,
    ignore: missing !== undefined,
    sanitizeResources: false,
    fn: async () => {
      const sshd = await startSshd();
      const [dir, removeDir] = await sessionDir();
      const marker = `drop-marker-${crypto.randomUUID()}`;
      const args = ["--session-dir", dir, "--session-grace-ms", "3000", "--log-level", "off"];
      try {
        const first = sshServer(sshd, args, command());
        const opened = await first.call("initialize", {
          clientName: "t",
          resumeSessionId: null,
        });
        first.notify("initialized", {});
        await first.call("process/start", {
          processId: "p",
          argv: ["sh", "-c", slowLines(40, 0.1, 7), marker],
          cwd: "/",
          env: { PATH: "/usr/bin:/bin" },
          tty: false,
          arg0: null,
          sandbox: null,
        });
        await first.waitFor(() => first.outputText("p").includes("line-5\n"));
        const before = first.outputText("p");
        const lastSeq = Math.max(
          ...first.messages.filter((m) => m.method === "process/output").map((m) => m.params.seq),
        );
        first.kill(); // SIGKILL to the local ssh client: the link drops.
        await first.exited;

        await using second = sshServer(sshd, args, command());
        const resumed = await second.call("initialize", {
          clientName: "t",
          resumeSessionId: opened.sessionId,
        });
        assert.equal(resumed.sessionId, opened.sessionId);
        second.notify("initialized", {});
        const rest = await readToEnd(second, "p", lastSeq);
        assert.equal(before + rest.text, numberedLines(40));
        assert.equal(rest.exitCode, 7);
        assert.equal(rest.last.closed, true);
        // The exit and the close are numbered after the last chunk, once each.
        assert.deepEqual(rest.seqs, [...rest.seqs].sort((a, b) => a - b));
        await second.close();
        // The grace window ends: neither the command nor its server is left.
        await eventually(
          async () => (await pidsMentioning(marker)).length === 0,
          20_000,
          "the command to be gone",
        );
        await eventually(
          async () => (await pidsMentioning(dir)).length === 0,
          20_000,
          "the servers holding the session to exit",
        );
      } finally {
        await sshd.stop();
        await removeDir();
      }
    },
  });
}

Deno.test({
  name: "session over ssh (v0): a detached process is listed and read whole on a second ssh",
  ignore: missing !== undefined,
  sanitizeResources: false,
  fn: async () => {
    const sshd = await startSshd();
    const [dir, removeDir] = await sessionDir();
    const args = ["--session-dir", dir, "--session-grace-ms", "1000", "--log-level", "off"];
    try {
      const first = sshServer(sshd, args);
      const init = await first.call("initialize", { clientName: "t", session: {} });
      assert.equal(init.session.resumed, false);
      assert.equal(init.session.fromOtherServers, true);
      first.notify("initialized", {});
      await first.call("process/start", {
        processId: "job",
        argv: ["sh", "-c", "echo start; sleep 2; echo end; exit 4"],
        cwd: "/",
        env: { PATH: "/usr/bin:/bin" },
        tty: false,
        ttlMs: 60_000,
      });
      await first.waitFor(() => first.outputText("job").includes("start"));
      // Done with it, on purpose this time: the job is meant to outlive it.
      // (The server now keeps the session, so sshd keeps the channel: the
      // client hangs up, as the library's close() does in session mode.)
      first.child.stdin!.end();
      first.kill();
      await first.exited;

      // Past the grace window: the job's own ttlMs keeps it (and the session).
      await new Promise((r) => setTimeout(r, 1500));
      await using second = sshServer(sshd, args);
      const again = await second.call("initialize", {
        clientName: "t",
        session: { resume: init.session.id },
      });
      assert.equal(again.session.id, init.session.id);
      assert.equal(again.session.resumed, true);
      second.notify("initialized", {});
      const [entry] = (await second.call("process/list", {})).processes;
      assert.equal(entry.processId, "job");
      assert.deepEqual(entry.argv, ["sh", "-c", "echo start; sleep 2; echo end; exit 4"]);
      assert.equal(entry.ttlMs, 60_000);
      assert.equal(entry.firstSeq, 1);
      const all = await readToEnd(second, "job");
      assert.equal(all.text, "start\nend\n");
      assert.equal(all.seqs[0], 1);
      assert.equal(all.exitCode, 4);
      const [done] = (await second.call("process/list", {})).processes;
      assert.equal(done.state, "exited");
      assert.equal(done.exitCode, 4);
    } finally {
      await sshd.stop();
      await removeDir();
    }
  },
});
