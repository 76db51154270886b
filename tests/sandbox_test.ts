/**
 * Sandboxed processes and files with the real bubblewrap, in this
 * project's dialect (`{"mode": "restricted", ...}`), on both runtimes:
 * where writes land, `.git` kept read-only, a symlink out of the workspace,
 * the network, `sandboxDenied`, and no process left behind.
 */
import assert from "node:assert/strict";
import { chmod, lstat, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { b64, eventually, type Msg, nodeServerCommand, TestServer, unb64 } from "./harness.ts";
import { denoServerCommand } from "./harness.ts";
import { initializeResult } from "./server_helpers.ts";
import { bwrapMissing, pidsMentioning, type SandboxBox, sandboxBox } from "./sandbox_fixture.ts";

const RUNTIMES: [string, () => string[]][] = [
  ["deno", denoServerCommand],
  ["node", nodeServerCommand],
];

/** The sandbox of these tests: the machine readable, `.git` read-only, the workspace and /tmp writable. */
function restricted(box: SandboxBox, extra: Msg = {}): Msg {
  return {
    mode: "restricted",
    read: ["/", join(box.ws, ".git")],
    write: [box.ws, "/tmp"],
    ...extra,
  };
}

/** Run `sh -c cmd` sandboxed to its end; returns its `process/exited` params and output. */
async function runIn(
  s: TestServer,
  id: string,
  cmd: string,
  sandbox: Msg,
  cwd: string,
): Promise<[Msg, string]> {
  const started = await s.start(id, ["sh", "-c", cmd], { sandbox, cwd });
  assert.equal(started.error, undefined, JSON.stringify(started.error));
  assert.deepEqual(started.result, { processId: id, sandbox: "bubblewrap" });
  const exited = (await s.waitExited(id)).params;
  return [exited, s.outputText(id)];
}

async function exists(path: string): Promise<boolean> {
  return await lstat(path).then(() => true, () => false);
}

for (const [runtime, command] of RUNTIMES) {
  Deno.test({
    name: `sandbox (${runtime}): writes land in the workspace and /tmp only`,
    ignore: bwrapMissing(),
    fn: async () => {
      const box = await sandboxBox();
      await using s = await TestServer.start([], { command: command() });
      try {
        const sb = restricted(box);
        const caps = initializeResult(s).capabilities.sandbox;
        assert.equal(caps.available, true, JSON.stringify(caps));
        assert.equal(caps.type, "bubblewrap");
        const ok = await runIn(s, "ws", `echo a > ${box.ws}/in.txt`, sb, box.ws);
        assert.deepEqual([ok[0].exitCode, ok[0].sandboxDenied], [0, false], ok[1]);
        assert.equal(await readFile(join(box.ws, "in.txt"), "utf8"), "a\n");
        const tmp = await runIn(s, "tmp", `echo b > ${box.tmpFile}`, sb, box.ws);
        assert.deepEqual([tmp[0].exitCode, tmp[0].sandboxDenied], [0, false], tmp[1]);
        assert.equal(await readFile(box.tmpFile, "utf8"), "b\n");
        const out = await runIn(s, "out", `echo c > ${box.outside}/out.txt`, sb, box.ws);
        assert.notEqual(out[0].exitCode, 0);
        assert.equal(out[0].sandboxDenied, true, out[1]);
        assert.match(out[1], /Read-only file system/);
        assert.equal(await exists(join(box.outside, "out.txt")), false);
        const git = await runIn(s, "git", `echo d > ${box.ws}/.git/config`, sb, box.ws);
        assert.equal(git[0].sandboxDenied, true, git[1]);
        assert.equal(await readFile(join(box.ws, ".git/config"), "utf8"), "[core]\n");
        const link = await runIn(s, "link", `echo e > ${box.ws}/link/through.txt`, sb, box.ws);
        assert.equal(link[0].sandboxDenied, true, link[1]);
        assert.equal(await exists(join(box.outside, "through.txt")), false);
        // Ordinary failures are not the sandbox's.
        for (const [id, cmd, code] of [["f", "false", 1], ["x3", "exit 3", 3]] as const) {
          const [e] = await runIn(s, id, cmd, sb, box.ws);
          assert.deepEqual([e.exitCode, e.sandboxDenied], [code, false]);
        }
        const read = await s.call("process/read", { processId: "out", afterSeq: 0 });
        assert.equal(read.sandboxDenied, true);
      } finally {
        await box.cleanup();
      }
    },
  });
}

Deno.test({
  name: "sandbox: fs calls that carry a sandbox are checked on real paths",
  ignore: bwrapMissing(),
  fn: async () => {
    const box = await sandboxBox();
    await using s = await TestServer.start();
    try {
      const sandbox = restricted(box);
      const write = (path: string) =>
        s.request("fs/writeFile", { path, dataBase64: b64("x"), sandbox });
      assert.equal((await write(join(box.ws, "ok.txt"))).error, undefined);
      assert.equal(await readFile(join(box.ws, "ok.txt"), "utf8"), "x");
      const through = await write(join(box.ws, "link/fs.txt"));
      assert.equal(through.error?.code, -32600);
      assert.deepEqual(
        [through.error.data.errno, through.error.data.sandboxDenied],
        ["EACCES", true],
      );
      assert.match(
        through.error.message,
        /sandbox denies write access to .*link\/fs\.txt \(which is/,
      );
      assert.equal(await exists(join(box.outside, "fs.txt")), false);
      assert.equal((await write(join(box.ws, ".git/config"))).error?.data?.sandboxDenied, true);
      assert.equal((await write(join(box.outside, "o.txt"))).error?.data?.sandboxDenied, true);
      // A recursive removal must not reach into the read-only .git.
      const rmAll = await s.request("fs/remove", { path: box.ws, recursive: true, sandbox });
      assert.match(rmAll.error?.message ?? "", /contains .*\.git, which is read-only/);
      assert.equal(await exists(join(box.ws, "ok.txt")), true);
      // Reads stay allowed; the same call without a sandbox is unconfined.
      const got = await s.call("fs/readFile", { path: join(box.ws, ".git/config"), sandbox });
      assert.equal(unb64(got.dataBase64), "[core]\n");
      const free = { path: join(box.outside, "free.txt"), dataBase64: b64("y") };
      assert.equal((await s.request("fs/writeFile", free)).error, undefined);
    } finally {
      await box.cleanup();
    }
  },
});

Deno.test({
  name: "sandbox: the network is a private loopback unless enabled",
  ignore: bwrapMissing(),
  fn: async () => {
    const box = await sandboxBox();
    let connections = 0;
    const listener = createServer((c) => {
      connections++;
      c.end("hello\n");
    });
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
    const port = (listener.address() as { port: number }).port;
    await using s = await TestServer.start();
    try {
      const cmd = `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3'`;
      const [cut, cutOut] = await runIn(s, "cut", cmd, restricted(box), box.ws);
      assert.notEqual(cut.exitCode, 0);
      assert.match(cutOut, /Connection refused/);
      assert.equal(cut.sandboxDenied, true);
      assert.equal(connections, 0);
      const open = restricted(box, { network: true });
      const [on, onOut] = await runIn(s, "on", cmd, open, box.ws);
      assert.deepEqual([on.exitCode, on.sandboxDenied, onOut], [0, false, "hello\n"]);
      assert.equal(connections, 1);
    } finally {
      listener.close();
      await box.cleanup();
    }
  },
});

Deno.test({
  name: "sandbox: PTY echo, resize, interrupt (signal and typed ^C) and EOF work inside",
  ignore: bwrapMissing(),
  fn: async () => {
    const box = await sandboxBox();
    await using s = await TestServer.start();
    try {
      const sandbox = restricted(box);
      const script = "trap 'echo got-INT; exit 7' INT; read line; echo got:$line; " +
        "read again; stty size; echo ready; while :; do sleep 0.05; done";
      const started = await s.start("t", ["bash", "-c", script], {
        tty: true,
        sandbox,
        cwd: box.ws,
      });
      assert.equal(started.error, undefined, JSON.stringify(started.error));
      await s.call("process/write", { processId: "t", chunk: b64("hello\n") });
      await s.waitFor(() => s.outputText("t").includes("got:hello"), 10_000, "the echo");
      await s.call("process/resize", { processId: "t", rows: 40, cols: 100 });
      await s.call("process/write", { processId: "t", chunk: b64("\n") });
      await s.waitFor(() => s.outputText("t").includes("ready"), 10_000, "ready");
      assert.match(s.outputText("t"), /40 100/);
      await s.call("process/signal", { processId: "t", signal: "interrupt" });
      const exited = (await s.waitExited("t")).params;
      assert.match(s.outputText("t"), /got-INT/);
      assert.equal(exited.exitCode, 7);
      // A typed ^C reaches the command, not bubblewrap's monitor: the trap decides the status.
      const typed = "trap 'echo typed-INT; exit 9' INT; echo ready; while :; do sleep 0.05; done";
      await s.start("c", ["bash", "-c", typed], { tty: true, sandbox, cwd: box.ws });
      await s.waitFor(() => s.outputText("c").includes("ready"), 10_000, "ready");
      await s.call("process/write", { processId: "c", chunk: b64("\x03") });
      assert.deepEqual((await s.waitExited("c")).params.exitCode, 9);
      assert.match(s.outputText("c"), /typed-INT/);
      // EOF on a terminal and on a pipe.
      await s.start("eof", ["cat"], { tty: true, sandbox, cwd: box.ws });
      await s.call("process/write", { processId: "eof", chunk: b64("typed\n") });
      await s.call("process/closeStdin", { processId: "eof" });
      assert.equal((await s.waitExited("eof")).params.exitCode, 0);
      await s.start("pipe", ["cat"], { pipeStdin: true, sandbox, cwd: box.ws });
      await s.call("process/write", { processId: "pipe", chunk: b64("piped") });
      await s.call("process/closeStdin", { processId: "pipe" });
      assert.equal((await s.waitExited("pipe")).params.exitCode, 0);
      assert.equal(s.outputText("pipe"), "piped");
    } finally {
      await box.cleanup();
    }
  },
});

Deno.test({
  name: "sandbox: terminate and disconnect leave no process behind, inside or outside",
  ignore: bwrapMissing(),
  fn: async () => {
    const box = await sandboxBox();
    await using s = await TestServer.start();
    try {
      const marker = `sbx-${crypto.randomUUID().slice(0, 8)}`;
      // Children in the group, in a new session, and one that ignores SIGTERM.
      const cmd = `trap '' TERM; (exec -a ${marker} sleep 600) & setsid bash -c ` +
        `'exec -a ${marker} sleep 600' & (trap '' TERM; exec -a ${marker} sleep 600) & ` +
        `echo up; wait`;
      for (const [id, graceMs] of [["gentle", 300], ["hard", 0]] as const) {
        await s.start(id, ["bash", "-c", cmd], { sandbox: restricted(box), cwd: box.ws });
        await s.waitFor(() => s.outputText(id).includes("up"), 10_000, "up");
        assert.ok((await pidsMentioning(marker)).length >= 4, "the sandbox and its sleeps run");
        await s.call("process/terminate", { processId: id, graceMs });
        await s.waitExited(id);
        const left = await pidsMentioning(marker);
        assert.deepEqual(left, [], `left behind after terminate (${id})`);
      }
      // A connection that ends takes its sandboxes with it.
      const other = await TestServer.start();
      await other.start("gone", ["bash", "-c", cmd], { sandbox: restricted(box), cwd: box.ws });
      await other.waitFor(() => other.outputText("gone").includes("up"), 10_000, "up");
      assert.ok((await pidsMentioning(marker)).length >= 4);
      await other.close();
      await eventually(async () => (await pidsMentioning(marker)).length === 0, 5_000, "no pids");
    } finally {
      await box.cleanup();
    }
  },
});

Deno.test({
  name: "sandbox: without bwrap a sandboxed start is refused and says how to fix it",
  ignore: bwrapMissing(),
  fn: async () => {
    await using s = await TestServer.start([], { env: { PATH: "/nonexistent-bin" } });
    const caps = initializeResult(s).capabilities.sandbox;
    assert.equal(caps.available, false);
    assert.match(
      caps.reason,
      /bwrap \(bubblewrap\) was not found in PATH.*apt-get install bubblewrap/,
    );
    const marker = `/tmp/exec-server-unconfined-${crypto.randomUUID()}`;
    const refused = await s.start("sb", ["sh", "-c", `touch ${marker}`], {
      sandbox: { mode: "restricted", write: ["/tmp"] },
    });
    assert.equal(refused.error?.code, -32600);
    assert.equal(refused.error.data?.kind, "sandboxUnavailable");
    assert.match(refused.error.message, /sandbox unavailable: bwrap .* not found/);
    assert.equal(await exists(marker), false, "nothing ran unconfined");
    const plain = await s.start("plain", ["sh", "-c", "echo fine"]);
    assert.equal(plain.error, undefined);
    assert.equal((await s.waitExited("plain")).params.exitCode, 0);
    assert.equal(s.outputText("plain"), "fine\n");
  },
});

Deno.test({
  name: "sandbox: a bwrap that cannot create namespaces is refused with the reason",
  ignore: bwrapMissing(),
  fn: async () => {
    // What bubblewrap says where user namespaces are forbidden.
    const dir = await mkdtemp("/var/tmp/exec-server-fake-bwrap-");
    const fake = join(dir, "bwrap");
    await writeFile(
      fake,
      '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }\n' +
        'echo "bwrap: No permissions to create new namespace" >&2; exit 1\n',
    );
    await chmod(fake, 0o755);
    try {
      await using s = await TestServer.start([], { env: { PATH: `${dir}:/usr/bin:/bin` } });
      const caps = initializeResult(s).capabilities.sandbox;
      assert.equal(caps.available, false);
      assert.match(caps.reason, /cannot create a sandbox here: bwrap: No permissions .*namespaces/);
      const refused = await s.start("sb", ["true"], { sandbox: { mode: "restricted" } });
      assert.equal(refused.error?.data?.kind, "sandboxUnavailable");
      assert.match(refused.error.message, /No permissions to create new namespace/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
});

Deno.test("sandbox: malformed v0 sandboxes are -32602 naming the field", async () => {
  await using s = await TestServer.start();
  const cases: [unknown, RegExp][] = [
    [
      { mode: "restricted", write: ["relative/dir"] },
      /sandbox\.write\[0\] must be an absolute path/,
    ],
    [
      { mode: "restricted", write: ["/a/../etc"] },
      /sandbox\.write\[0\] must not contain "\." or "\.\."/,
    ],
    [{ mode: "restricted", read: ["/a\u0000b"] }, /sandbox\.read\[0\] must not contain NUL/],
    [{ mode: "restricted", deny: "/etc" }, /sandbox\.deny must be an array/],
    [{ mode: "restricted", write: Array(300).fill("/tmp") }, /sandbox\.write has 300 entries/],
    [{ mode: "restricted", network: "yes" }, /sandbox\.network must be a boolean/],
    [{ mode: "restricted", extra: 1 }, /sandbox\.extra is not a sandbox field/],
    [[], /sandbox must be an object/],
  ];
  for (const [i, [sandbox, message]] of cases.entries()) {
    const res = await s.start(`bad${i}`, ["true"], { sandbox });
    assert.equal(res.error?.code, -32602, JSON.stringify(sandbox).slice(0, 80));
    assert.match(res.error.message, message);
  }
  const fsBad = await s.request("fs/readFile", { path: "/etc/hostname", sandbox: cases[0][0] });
  assert.equal(fsBad.error?.code, -32602);
  const ok = await s.start("alive", ["true"]);
  assert.equal(ok.error, undefined);
  await s.waitExited("alive");
});
