/**
 * Sandboxes in the Codex CLI's dialect, message by message, with the real
 * bubblewrap: the CLI's workspace-write object enforced for processes and
 * files, and a hostile pass over that object.
 */
import assert from "node:assert/strict";
import { lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import { b64, type Msg, type TestServer } from "./harness.ts";
import { codexServer } from "./server_helpers.ts";
import {
  bwrapMissing,
  codexWorkspaceWrite,
  type SandboxBox,
  sandboxBox,
} from "./sandbox_fixture.ts";

const special = (kind: string, extra: Msg = {}) => ({
  type: "special",
  value: { kind, ...extra },
});

const workspaceWrite = (box: SandboxBox): Msg => codexWorkspaceWrite(box.ws);

function start(s: TestServer, id: string, cmd: string, sandbox: unknown, cwd = "/"): Promise<Msg> {
  return s.request("process/start", {
    processId: id,
    argv: ["/bin/sh", "-c", cmd],
    cwd: `file://${cwd}`,
    env: { PATH: "/usr/bin:/bin" },
    tty: false,
    pipeStdin: false,
    arg0: null,
    sandbox,
    enforceManagedNetwork: false,
    managedNetwork: null,
  });
}

async function closedExit(s: TestServer, id: string): Promise<Msg> {
  await s.waitFor((m) => m.method === "process/closed" && m.params.processId === id);
  return s.messages.find((m) => m.method === "process/exited" && m.params.processId === id)!;
}

const exists = (p: string) => lstat(p).then(() => true, () => false);

Deno.test({
  name: "codex sandbox: workspace-write is enforced for processes and files",
  ignore: bwrapMissing(),
  fn: async () => {
    const box = await sandboxBox();
    await using s = await codexServer();
    try {
      const sb = workspaceWrite(box);
      const ok = await start(
        s,
        "in",
        `echo in > ${box.ws}/in.txt && echo t > ${box.tmpFile}`,
        sb,
        box.ws,
      );
      assert.deepEqual(ok.result, { processId: "in", sandboxType: "linuxSeccomp" });
      assert.equal((await closedExit(s, "in")).params.sandboxDenied, false);
      assert.equal(await readFile(join(box.ws, "in.txt"), "utf8"), "in\n");
      assert.equal(await readFile(box.tmpFile, "utf8"), "t\n");
      await start(s, "out", `echo o > ${box.outside}/o.txt`, sb, box.ws);
      assert.equal((await closedExit(s, "out")).params.sandboxDenied, true);
      const read = await s.call("process/read", { processId: "out", afterSeq: 0, waitMs: 0 });
      assert.equal(read.sandboxDenied, true);
      assert.equal(await exists(join(box.outside, "o.txt")), false);
      await start(s, "git", `echo g > ${box.ws}/.git/config`, sb, box.ws);
      assert.equal((await closedExit(s, "git")).params.sandboxDenied, true);
      assert.equal(await readFile(join(box.ws, ".git/config"), "utf8"), "[core]\n");
      // Files: the same object on fs/* calls.
      const write = (path: string) =>
        s.request("fs/writeFile", { path: `file://${path}`, dataBase64: b64("x"), sandbox: sb });
      assert.equal((await write(join(box.ws, "f.txt"))).error, undefined);
      const through = await write(join(box.ws, "link/f.txt"));
      assert.equal(through.error?.code, -32600);
      assert.equal(through.error.data.errno, "EACCES");
      assert.equal(await exists(join(box.outside, "f.txt")), false);
      assert.equal((await write(join(box.ws, ".git/HEAD"))).error?.code, -32600);
      // Not found is still the CLI's -32004, under a sandbox too.
      const missing = await s.request("fs/getMetadata", {
        path: `file://${box.ws}/AGENTS.md`,
        sandbox: sb,
      });
      assert.equal(missing.error?.code, -32004);
    } finally {
      await box.cleanup();
    }
  },
});

Deno.test("codex sandbox: hostile sandbox objects are -32602 naming the field", async () => {
  await using s = await codexServer();
  const box = { ws: "/srv/app" } as SandboxBox;
  const base = workspaceWrite(box);
  const withEntries = (entries: unknown): Msg => ({
    ...base,
    permissions: { ...base.permissions, file_system: { type: "restricted", entries } },
  });
  const entry = (path: unknown, access = "read") => ({ path, access });
  const field = "sandbox.permissions.file_system.entries";
  const cases: [unknown, string][] = [
    [withEntries([entry(special("everything"))]), `${field}[0].path.value.kind "everything"`],
    [withEntries([entry({ type: "regex", path: "/" })]), `${field}[0].path.type`],
    [withEntries([entry({ type: "path", path: "srv/app" })]), `${field}[0].path.path`],
    [withEntries([entry({ type: "path", path: "/srv/../etc" })]), `${field}[0].path.path`],
    [withEntries([entry({ type: "path", path: "/srv/a\u0000b" })]), `${field}[0].path.path`],
    [
      withEntries([entry(special("project_roots", { subpath: "../up" }), "write")]),
      `${field}[0].path.value.subpath`,
    ],
    [withEntries([entry(special("root"), "admin")]), `${field}[0].access`],
    [withEntries([{ ...entry(special("root")), extra: true }]), `${field}[0].extra`],
    [withEntries(Array(5000).fill(entry(special("root")))), `${field} has 5000 entries`],
    [withEntries("all"), `${field} must be an array`],
    [{ ...base, permissions: { ...base.permissions, network: "sometimes" } }, "network"],
    [{ ...base, workspaceRoots: ["relative"] }, "sandbox.workspaceRoots[0]"],
    [{ ...base, surprise: 1 }, "sandbox.surprise is not a known field"],
    ["workspace-write", "sandbox must be an object"],
  ];
  for (const [i, [sandbox, named]] of cases.entries()) {
    const res = await start(s, `h${i}`, "touch /tmp/never", sandbox);
    assert.equal(res.error?.code, -32602, `case ${i}: ${JSON.stringify(res)}`.slice(0, 300));
    assert.ok(res.error.message.includes(named), `case ${i}: ${res.error.message}`);
    const fsRes = await s.request("fs/readFile", { path: "file:///etc/hostname", sandbox });
    assert.equal(fsRes.error?.code, -32602, `fs case ${i}`);
  }
  const glob = await start(
    s,
    "glob",
    "true",
    withEntries([entry({ type: "glob_pattern", pattern: "**/*.env" }, "deny")]),
  );
  assert.equal(glob.error?.code, -32600);
  assert.match(glob.error.message, /glob_pattern entries are not supported/);
  // The server lives on and runs unconfined starts.
  assert.equal((await start(s, "alive", "true", null)).error, undefined);
  assert.equal((await closedExit(s, "alive")).params.exitCode, 0);
});
