/**
 * `ExecServerClient.connectSsh` end to end, through a real OpenSSH server
 * on 127.0.0.1 that the test starts itself (see ssh_fixture.ts).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { writeFileSync } from "node:fs";
import {
  ConnectionClosedError,
  Environment,
  ExecServerClient,
  shellQuote,
  sshCommandLine,
} from "../mod.ts";
import { eventually, pidsByArgv0, ROOT } from "./harness.ts";
import { DENO_BIN, sshdMissingReason, startSshd } from "./ssh_fixture.ts";

const missing = sshdMissingReason();
// The one line the whole suite prints about it (ssh_bootstrap_test.ts skips
// its sshd tests for the same reason and says nothing more).
if (missing) console.error(`ssh tests skipped (ssh_test.ts, ssh_bootstrap_test.ts): ${missing}`);

Deno.test("ssh: shellQuote keeps every word literal under dash, bash and zsh", () => {
  const words = [
    "plain",
    "--log-level",
    "a/b.c:d,e@f%g+h-i",
    "k=v",
    // zsh expands a word starting with "=" to a command's path (=ls -> /usr/bin/ls).
    "=ls",
    "=",
    "~",
    "~root",
    "a^b",
    "x#y",
    "#c",
    "it's",
    "two words",
    "$HOME",
    "*",
    "",
  ];
  assert.equal(shellQuote("plain"), "plain");
  assert.equal(shellQuote("k=v"), "k=v");
  assert.equal(shellQuote("=ls"), "'=ls'");
  assert.equal(shellQuote("~"), "'~'");
  assert.equal(shellQuote(""), "''");
  const line = ["printf '[%s]\\n'", ...words.map(shellQuote)].join(" ");
  const expected = words.map((w) => `[${w}]\n`).join("");
  for (const shell of ["dash", "bash", "zsh"]) {
    const r = spawnSync(shell, ["-c", line], { encoding: "utf8" });
    if (r.error) continue; // that shell is not installed
    assert.equal(r.stdout, expected, `${shell}: ${line}\n${r.stderr}`);
  }
});

Deno.test("ssh: connectSsh rejects bad arguments instead of throwing", async () => {
  for (
    const [destination, binary, message] of [
      ["-oProxyCommand=x", undefined, /invalid ssh destination "-oProxyCommand=x"/],
      ["", undefined, /invalid ssh destination ""/],
      ["host", "  ", /binary must not be empty/],
    ] as const
  ) {
    let connecting: Promise<ExecServerClient> | undefined;
    assert.doesNotThrow(() => {
      connecting = ExecServerClient.connectSsh(destination, { binary, sshCommand: "false" });
    }, `connectSsh(${JSON.stringify(destination)}) must return a promise`);
    await assert.rejects(connecting!, (err: Error) => {
      assert.ok(err instanceof TypeError, String(err));
      assert.match(err.message, message);
      return true;
    });
  }
  assert.throws(() => sshCommandLine("-x"), TypeError, "the helper itself stays synchronous");
});

Deno.test({
  name: "ssh: connectSsh runs the server remotely, and closing ends it",
  ignore: missing !== undefined,
  async fn() {
    const sshd = await startSshd();
    try {
      // The "remote" exec-server: sshd gives it a minimal environment, so
      // everything is named by absolute path. bash's `exec -a` puts the
      // marker (its first argument) into the server's command line.
      const binary = sshd.writeScript(
        "exec-server",
        [
          "#!/bin/bash",
          'marker="$1"; shift',
          `exec -a "$marker" ${DENO_BIN} run -A ${ROOT}cli.ts "$@"`,
          "",
        ].join("\n"),
      );
      const marker = `exec-server-ssh-${crypto.randomUUID()}`;
      const client = await ExecServerClient.connectSsh(sshd.destination, {
        binary,
        serverArgs: [marker, "--log-level", "warn"],
        sshArgs: sshd.sshArgs,
        initializeTimeoutMs: 30_000,
      });
      assert.equal(client.protocolVersion, "exec-server.v0");
      assert.equal(client.serverInfo?.name, "exec-server");
      const servers = await pidsByArgv0(marker);
      assert.equal(servers.length, 1, `one remote server runs (${servers})`);

      // A command on "the remote": it runs under sshd's session, not ours.
      const r = await client.run(["sh", "-c", 'echo "parent $PPID"; echo to-stderr >&2; exit 9']);
      assert.equal(r.exitCode, 9);
      assert.equal(r.stdout, `parent ${servers[0]}\n`);
      assert.equal(r.stderr, "to-stderr\n");

      // Files on "the remote".
      writeFileSync(`${sshd.dir}/remote.txt`, "written before\n");
      const env = Environment.remote(client);
      assert.equal(
        new TextDecoder().decode(await env.fs.readFile(`${sshd.dir}/remote.txt`)),
        "written before\n",
      );
      await env.fs.writeFile(`${sshd.dir}/back.txt`, new TextEncoder().encode("round trip"));
      assert.equal(await readFile(`${sshd.dir}/back.txt`, "utf8"), "round trip");
      await assert.rejects(env.fs.readFile(`${sshd.dir}/missing`), { errno: "ENOENT" });

      // A long-running remote process dies with the connection, like the server.
      const childMarker = `ssh-child-${crypto.randomUUID()}`;
      const sleeper = await client.spawn({ argv: ["sleep", "300"], arg0: childMarker });
      assert.equal((await pidsByArgv0(childMarker)).length, 1);

      await client.close();
      const info = await client.closed;
      assert.equal(info.byClient, true);
      await assert.rejects(sleeper.wait(), ConnectionClosedError);
      await eventually(
        async () => (await pidsByArgv0(marker)).length === 0,
        10_000,
        "the server to exit",
      );
      await eventually(
        async () => (await pidsByArgv0(childMarker)).length === 0,
        10_000,
        "its child to die",
      );
    } catch (err) {
      console.error(`sshd log:\n${sshd.log()}`);
      throw err;
    } finally {
      await sshd.stop();
    }
  },
});

Deno.test({
  name: "ssh: a remote command that is not a server fails the handshake with its stderr",
  ignore: missing !== undefined,
  async fn() {
    const sshd = await startSshd();
    try {
      const err = await ExecServerClient.connectSsh(sshd.destination, {
        binary: "echo no-server-here >&2; exit 127",
        sshArgs: sshd.sshArgs,
      }).then(() => assert.fail("should reject"), (e) => e);
      assert.ok(err instanceof ConnectionClosedError, String(err));
      assert.match(err.reason, /exited with code 127/);
      assert.match(err.reason, /no-server-here/);
    } finally {
      await sshd.stop();
    }
  },
});
