/**
 * `exec-server mcp`'s file tools end to end on stdio: what lands on disk,
 * what the model is told, and the errors it gets for what cannot be done;
 * `--root`, `--read-only` and the sandbox.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { serverCommand } from "./harness.ts";
import { bwrapMissing, sandboxBox } from "./sandbox_fixture.ts";
import { callTool, initialize, McpStdio, textOf } from "./mcp_fixture.ts";
import { TOOLS } from "../src/mcp/tool_list.ts";

async function withMcp(flags: string[], fn: (c: McpStdio, dir: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), "mcp-files-"));
  const client = new McpStdio(flags.map((f) => f.replace("$DIR", dir)), serverCommand());
  try {
    await initialize(client);
    await fn(client, dir);
  } finally {
    await client.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// A 1x1 PNG.
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

Deno.test("mcp files: tools/list offers every tool with its annotations; --read-only only readers", async () => {
  await withMcp([], async (c) => {
    const r = await c.request("tools/list");
    const names = r.result.tools.map((t: Record<string, unknown>) => t.name);
    assert.deepEqual(names, [
      "exec_command",
      "write_stdin",
      "list_sessions",
      "kill_session",
      "read_file",
      "write_file",
      "edit_file",
      "list_directory",
      "search_files",
      "get_file_info",
      "create_directory",
      "move_file",
      "remove",
    ]);
    for (const t of r.result.tools) {
      assert.equal(t.inputSchema.type, "object", t.name);
      assert.equal(typeof t.annotations.readOnlyHint, "boolean", t.name);
    }
    assert.equal(
      r.result.tools.find((t: { name: string }) => t.name === "remove").annotations.destructiveHint,
      true,
    );
  });
  await withMcp(["--read-only"], async (c) => {
    const r = await c.request("tools/list");
    const names = r.result.tools.map((t: Record<string, unknown>) => t.name);
    assert.deepEqual(names, TOOLS.filter((t) => t.annotations.readOnlyHint).map((t) => t.name));
    const refused = await c.request("tools/call", {
      name: "write_file",
      arguments: { path: "/tmp/x", content: "" },
    });
    assert.equal(refused.error?.code, -32602);
  });
});

Deno.test("mcp files: write, read (whole, head, tail, lines), append and info", () =>
  withMcp([], async (c, dir) => {
    const path = join(dir, "sub/deeper/notes.txt");
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join("");
    const w = await callTool(c, "write_file", { path, content: lines });
    assert.match(textOf(w), /Wrote 71 bytes/);
    assert.equal(await readFile(path, "utf8"), lines);
    assert.equal(textOf(await callTool(c, "read_file", { path })), lines);
    const head = await callTool(c, "read_file", { path, head: 2 });
    assert.equal(head.content[0].text, "line 1\nline 2\n");
    assert.match(head.content[1].text, /Lines 1-2 of 10\. Read on with offset: 3\./);
    assert.equal((await callTool(c, "read_file", { path, tail: 1 })).content[0].text, "line 10\n");
    assert.equal(
      (await callTool(c, "read_file", { path, offset: 4, length: 2 })).content[0].text,
      "line 4\nline 5\n",
    );
    await callTool(c, "write_file", { path, content: "more\n", append: true });
    assert.equal(await readFile(path, "utf8"), lines + "more\n");
    const info = await callTool(c, "get_file_info", { path });
    assert.equal(info.structuredContent.type, "file");
    assert.equal(info.structuredContent.size, 76);
    const dirInfo = await callTool(c, "get_file_info", { path: dir });
    assert.equal(dirInfo.structuredContent.type, "directory");
    const missing = await callTool(c, "read_file", { path: join(dir, "nope") });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /ENOENT|no such file/i);
    assert.match(textOf(missing), /nope/);
  }));

Deno.test("mcp files: edit_file changes the file on disk and answers a unified diff", () =>
  withMcp([], async (c, dir) => {
    const path = join(dir, "app.py");
    await writeFile(path, "def f():\n    return 1\n\nprint(f())\n");
    const dry = await callTool(c, "edit_file", {
      path,
      edits: [{ oldText: "return 1", newText: "return 2" }],
      dryRun: true,
    });
    assert.match(textOf(dry), /Dry run/);
    assert.equal(await readFile(path, "utf8"), "def f():\n    return 1\n\nprint(f())\n");
    const r = await callTool(c, "edit_file", {
      path,
      edits: [{ oldText: "return 1", newText: "return 2" }, {
        oldText: "print(f())",
        newText: "print(f() + 1)",
      }],
    });
    assert.equal(await readFile(path, "utf8"), "def f():\n    return 2\n\nprint(f() + 1)\n");
    const diff = r.structuredContent.diff as string;
    assert.match(diff, /^--- a\/.*app\.py\n\+\+\+ b\/.*app\.py\n@@ -1,4 \+1,4 @@\n/);
    assert.ok(diff.includes("\n-    return 1\n+    return 2\n"), diff);
    assert.match(diff, /\n-print\(f\(\)\)\n\+print\(f\(\) \+ 1\)\n/);
    const twice = await callTool(c, "edit_file", {
      path,
      edits: [{ oldText: "f()", newText: "g()" }],
    });
    assert.equal(twice.isError, true);
    assert.match(textOf(twice), /occurs 2 times/);
    assert.equal(await readFile(path, "utf8"), "def f():\n    return 2\n\nprint(f() + 1)\n");
  }));

Deno.test("mcp files: list, search, create, move and remove", () =>
  withMcp([], async (c, dir) => {
    mkdirSync(join(dir, "src/lib"), { recursive: true });
    mkdirSync(join(dir, "node_modules/x"), { recursive: true });
    await writeFile(join(dir, "src/a.ts"), "");
    await writeFile(join(dir, "src/lib/b.ts"), "");
    await writeFile(join(dir, "src/lib/c.js"), "");
    await writeFile(join(dir, "node_modules/x/d.ts"), "");
    symlinkSync("/etc", join(dir, "link"));
    const l1 = await callTool(c, "list_directory", { path: dir });
    // A symlink is listed as what it leads to.
    assert.deepEqual(l1.structuredContent.entries, ["link/", "node_modules/", "src/"]);
    const l2 = await callTool(c, "list_directory", { path: join(dir, "src"), depth: 2 });
    assert.deepEqual([...l2.structuredContent.entries].sort(), [
      "a.ts",
      "lib/",
      "lib/b.ts",
      "lib/c.js",
    ]);
    const s = await callTool(c, "search_files", {
      path: dir,
      pattern: "*.ts",
      exclude: ["node_modules"],
    });
    assert.deepEqual([...s.structuredContent.matches].sort(), [
      join(dir, "src/a.ts"),
      join(dir, "src/lib/b.ts"),
    ]);
    const deep = await callTool(c, "search_files", { path: dir, pattern: "src/**/*.js" });
    assert.deepEqual(deep.structuredContent.matches, [join(dir, "src/lib/c.js")]);
    await callTool(c, "create_directory", { path: join(dir, "new/a/b") });
    assert.ok(existsSync(join(dir, "new/a/b")));
    const clash = await callTool(c, "move_file", {
      source: join(dir, "src/a.ts"),
      destination: join(dir, "src/lib/b.ts"),
    });
    assert.equal(clash.isError, true);
    assert.match(textOf(clash), /exists/);
    await callTool(c, "move_file", {
      source: join(dir, "src/a.ts"),
      destination: join(dir, "new/a.ts"),
    });
    assert.ok(existsSync(join(dir, "new/a.ts")) && !existsSync(join(dir, "src/a.ts")));
    const notRecursive = await callTool(c, "remove", { path: join(dir, "src") });
    assert.equal(notRecursive.isError, true);
    assert.match(textOf(notRecursive), /recursive: true/);
    await callTool(c, "remove", { path: join(dir, "src"), recursive: true });
    assert.ok(!existsSync(join(dir, "src")));
  }));

Deno.test("mcp files: an image comes back as image content", () =>
  withMcp([], async (c, dir) => {
    await writeFile(join(dir, "dot.png"), PNG);
    const r = await callTool(c, "read_file", { path: join(dir, "dot.png") });
    assert.equal(r.content[0].type, "image");
    assert.equal(r.content[0].mimeType, "image/png");
    assert.deepEqual(Uint8Array.from(atob(r.content[0].data), (ch) => ch.charCodeAt(0)), PNG);
  }));

Deno.test("mcp files: relative paths are refused, or resolve against --root", async () => {
  await withMcp([], async (c) => {
    const r = await callTool(c, "read_file", { path: "notes.txt" });
    assert.equal(r.isError, true);
    assert.match(
      textOf(r),
      /path must be an absolute path, got "notes\.txt" \(this server has no --root\)/,
    );
  });
  await withMcp(["--root", "$DIR"], async (c, dir) => {
    await callTool(c, "write_file", { path: "rel/x.txt", content: "hi" });
    assert.equal(await readFile(join(dir, "rel/x.txt"), "utf8"), "hi");
    const tools = (await c.request("tools/list")).result.tools;
    const readFileTool = tools.find((t: { name: string }) => t.name === "read_file");
    assert.match(
      readFileTool.inputSchema.properties.path.description,
      new RegExp(`relative to ${dir}`),
    );
  });
});

Deno.test({
  name: "mcp files: --write DIR sandboxes commands and file tools alike; outside is refused",
  ignore: bwrapMissing(),
  fn: async () => {
    const box = await sandboxBox();
    const client = new McpStdio(["--write", box.ws], serverCommand());
    try {
      await initialize(client);
      const inside = join(box.ws, "in.txt");
      const outside = join(box.outside, "out.txt");
      await callTool(client, "write_file", { path: inside, content: "ok" });
      assert.equal(await readFile(inside, "utf8"), "ok");
      const refused = await callTool(client, "write_file", { path: outside, content: "no" });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /sandbox denies write access to/);
      // Through the workspace's symlink to outside: still outside.
      const viaLink = await callTool(client, "write_file", {
        path: join(box.ws, "link/x"),
        content: "no",
      });
      assert.equal(viaLink.isError, true, textOf(viaLink));
      const cmd = await callTool(client, "exec_command", {
        cmd: `touch ${inside}.2 && echo made; touch ${outside} || echo refused`,
      });
      assert.match(textOf(cmd), /made\n/);
      assert.match(textOf(cmd), /refused\n/);
      assert.ok(existsSync(`${inside}.2`));
      assert.ok(!existsSync(outside));
      // Reading is allowed everywhere but the denied paths.
      assert.equal(textOf(await callTool(client, "read_file", { path: inside })), "ok");
    } finally {
      await client.close();
      await box.cleanup();
    }
  },
});
