/**
 * A server looking for a session trusts a session directory only once it
 * knows it is its user's alone: in a directory others may write (made by
 * someone else in a shared /tmp, say), a socket named for the session is
 * never connected to, and no secret is made there.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { TestServer } from "./harness.ts";
import { sessionDir } from "./session_fixture.ts";

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
