/**
 * Sandboxes from the client library: `spawn({ sandbox })` on a remote
 * server (both dialects: the session mode speaks the Codex one), and an
 * `Environment`'s default sandbox, local and remote, with the real
 * bubblewrap. The same script gives the same answers everywhere.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Environment, ExecServerClient, type SandboxOptions } from "../mod.ts";
import { startTokenServer } from "./codex_cli_fixture.ts";
import { ROOT, serverCommand } from "./harness.ts";
import { bwrapMissing, type SandboxBox, sandboxBox } from "./sandbox_fixture.ts";

const TOKEN = "sandbox-client-test-token-0123456789";

/** A script run the same way in every environment: one write inside, one outside. */
async function writesInAndOut(env: Environment, box: SandboxBox, tag: string): Promise<void> {
  const inside = await env.process.run(["sh", "-c", `echo ${tag} > ${box.ws}/${tag}.txt`]);
  assert.deepEqual([inside.exitCode, inside.sandboxDenied], [0, false], inside.stderr);
  assert.equal(await readFile(join(box.ws, `${tag}.txt`), "utf8"), `${tag}\n`);
  const outside = await env.process.run(["sh", "-c", `echo x > ${box.outside}/${tag}.txt`]);
  assert.notEqual(outside.exitCode, 0);
  assert.equal(outside.sandboxDenied, true, outside.stderr);
  assert.match(outside.stderr, /Read-only file system/);
  // An explicit `sandbox: null` runs unconfined.
  const free = await env.process.run({
    argv: ["sh", "-c", `echo free > ${box.outside}/${tag}-free.txt`],
    sandbox: null,
  });
  assert.equal(free.exitCode, 0);
  // Absent in this project's dialect; the Codex dialect always says false.
  assert.ok(!free.sandboxDenied);
}

Deno.test({
  name: "client sandbox: Environment defaults, local and remote, give the same answers",
  ignore: bwrapMissing(),
  fn: async () => {
    const box = await sandboxBox();
    const sandbox: SandboxOptions = { write: [box.ws] };
    const [cmd, ...args] = serverCommand();
    const client = await ExecServerClient.spawnStdio(cmd, args, { cwd: ROOT });
    const local = Environment.local({ sandbox });
    const remote = Environment.remote(client, { sandbox });
    try {
      await writesInAndOut(local, box, "local");
      await writesInAndOut(remote, box, "remote");
      // Per spawn, through the client itself.
      const p = await client.spawn({
        argv: ["sh", "-c", `touch ${box.outside}/direct.txt`],
        sandbox: { write: [box.ws], network: false },
      });
      const exit = await p.wait();
      assert.deepEqual([exit.exitCode !== 0, exit.sandboxDenied], [true, true]);
      // Bad sandbox paths fail before anything is sent, with the server's words.
      await assert.rejects(
        client.spawn({ argv: ["true"], sandbox: { write: ["relative"] } }),
        (e) =>
          e instanceof TypeError && /sandbox\.write\[0\] must be an absolute path/.test(e.message),
      );
      await assert.rejects(
        local.process.spawn({ argv: ["true"], sandbox: { deny: ["/a/../b"] } }),
        TypeError,
      );
    } finally {
      await local.close();
      await remote.close();
      await client.close();
      await box.cleanup();
    }
  },
});

Deno.test({
  name: "client sandbox: enforced in session mode too",
  ignore: bwrapMissing(),
  fn: async () => {
    const box = await sandboxBox();
    const [server, stop] = await startTokenServer(TOKEN);
    const client = await ExecServerClient.connectWebSocket(server.url, {
      token: TOKEN,
      resume: true,
    });
    try {
      await writesInAndOut(Environment.remote(client, { sandbox: { write: [box.ws] } }), box, "s");
    } finally {
      await client.close();
      await stop();
      await box.cleanup();
    }
  },
});
