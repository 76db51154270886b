/**
 * A PTY's master side must not leak into children started after it: they
 * could read and write another process's terminal, and would keep it
 * allocated. node-pty is patched at install for this
 * (scripts/patch_node_pty.cjs).
 */
import assert from "node:assert/strict";
import { readdir, readlink } from "node:fs/promises";
import { nodeServerCommand, TestServer } from "./harness.ts";

/** The terminal devices a process has open, by fd. */
async function terminalFds(pid: number): Promise<string[]> {
  const out: string[] = [];
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    try {
      const target = await readlink(`/proc/${pid}/fd/${fd}`);
      if (target === "/dev/ptmx" || target.startsWith("/dev/pts/")) out.push(`${fd} -> ${target}`);
    } catch {
      // Closed while listing.
    }
  }
  return out.sort();
}

async function pidOf(s: TestServer, id: string): Promise<number> {
  const out = await s.waitFor(
    (m) => m.method === "process/output" && m.params.processId === id,
    20_000,
    `the pid printed by ${id}`,
  );
  return Number(atob(out.params.chunk).trim());
}

for (const [runtime, command] of [["deno", undefined], ["node", "node"]] as const) {
  Deno.test(`pty fds (${runtime}): later children hold no other terminal's master`, async () => {
    await using s = await TestServer.start([], {
      command: command ? nodeServerCommand() : undefined,
    });
    // Two terminals open first, so that a leak would show in later children.
    for (const id of ["tty-a", "tty-b"]) {
      const res = await s.start(id, ["sleep", "30"], { tty: true });
      assert.ok(res.result, JSON.stringify(res.error));
    }
    const pipeRes = await s.start("pipe", ["sh", "-c", "echo $$; exec sleep 30"]);
    assert.ok(pipeRes.result, JSON.stringify(pipeRes.error));
    const ttyRes = await s.start("tty-c", ["sh", "-c", "echo $$; exec sleep 30"], { tty: true });
    assert.ok(ttyRes.result, JSON.stringify(ttyRes.error));
    const pipePid = await pidOf(s, "pipe");
    const ttyPid = await pidOf(s, "tty-c");

    assert.deepEqual(await terminalFds(pipePid), [], "a pipe child holds terminal fds");
    // A PTY child has its own terminal on 0, 1 and 2, and nothing else.
    const own = await terminalFds(ttyPid);
    assert.equal(own.length, 3, own.join(", "));
    for (const entry of own) assert.match(entry, /^[012] -> \/dev\/pts\/\d+$/);
    const slave = own[0].split(" -> ")[1];
    assert.ok(own.every((e) => e.endsWith(slave)), own.join(", "));
    for (const id of ["tty-a", "tty-b", "pipe", "tty-c"]) {
      await s.request("process/terminate", { processId: id });
    }
  });
}
