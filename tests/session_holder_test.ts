/**
 * The server that holds sessions after its stdin ended, and the servers
 * that look for them: a session directory is trusted only once it is known
 * to be its user's alone (in a directory others may write, made by someone
 * else in a shared /tmp, say, a socket named for the session is never
 * connected to, and no secret is made there); and a holder that is killed
 * takes its processes with it, as any server does.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { eventually, TestServer } from "./harness.ts";
import { killAll, pidsMentioning, sessionDir } from "./session_fixture.ts";

Deno.test("session dir: an open directory's socket is not trusted; the resume is unknown", async () => {
  const [dir, removeDir] = await sessionDir();
  const id = crypto.randomUUID();
  const hash = createHash("sha256").update(id).digest("hex").slice(0, 32);
  let connections = 0;
  const impostor = net.createServer((socket) => {
    connections++;
    socket.end('{"execServerLink":{"ok":true}}\n');
  });
  await new Promise<void>((resolve) => impostor.listen(join(dir, `s-${hash}.sock`), resolve));
  try {
    await chmod(dir, 0o777);
    await using s = new TestServer(["--session-dir", dir, "--log-level", "off"]);
    const answer = await s.request("initialize", { clientName: "t", session: { resume: id } });
    assert.equal(answer.error?.code, -32600);
    assert.match(answer.error.message, new RegExp(`unknown session id ${id}`));
    assert.equal(connections, 0);
    assert.equal(existsSync(join(dir, "secret")), false);
  } finally {
    await new Promise((resolve) => impostor.close(resolve));
    await removeDir();
  }
});

Deno.test("session holder: SIGKILLed while it keeps a session, its reaper kills the session's tree", async () => {
  const [dir, removeDir] = await sessionDir();
  const marker = `holder-marker-${crypto.randomUUID()}`;
  const s = new TestServer(["--session-dir", dir, "--log-level", "info"]);
  try {
    await s.call("initialize", { clientName: "t", session: {} });
    s.notify("initialized", {});
    await s.call("process/start", {
      processId: "p",
      argv: ["sh", "-c", "sleep 300 & sleep 300", marker],
      cwd: "/",
      env: { PATH: "/usr/bin:/bin" },
      tty: false,
      ttlMs: 600_000,
    });
    await eventually(async () => (await pidsMentioning(marker)).length >= 1);
    s.child.stdin!.end();
    await eventually(() => /keeping 1 session/.test(s.stderr), 10_000, "the server to stay");
    assert.equal(s.child.exitCode, null);
    s.kill();
    await s.exited;
    await eventually(
      async () => (await pidsMentioning(marker)).length === 0,
      10_000,
      "the reaper to kill the session's tree",
    );
  } finally {
    s.kill();
    await killAll(marker);
    await removeDir();
  }
});
