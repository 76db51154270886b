import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { CHILD_PIPE_BUDGET, enlargePipe, enlargeStreamPipe, PIPE_BYTES } from "./pipe_size.ts";

const MODULE = new URL("./pipe_size.ts", import.meta.url).href;
const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;

/** Run a script that enlarges its stdout (a pipe here) and prints the answer. */
async function enlargedInChild(permissions: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pipe-size-"));
  try {
    const script = join(dir, "child.mjs");
    await writeFile(
      script,
      `import { enlargePipe } from "${MODULE}";\nconsole.log(String(enlargePipe(1)));\n`,
    );
    const argv = deno
      ? [deno.execPath(), "run", ...permissions, script]
      : [process.execPath, script];
    return await new Promise<string>((resolve, reject) => {
      // stdin is a pipe too: a permission prompt would wait on it forever.
      const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => out += d);
      child.on("error", reject);
      child.on("exit", () => resolve(out.trim()));
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

Deno.test("enlargePipe: a pipe grows where the runtime may call fcntl", async () => {
  const expected = deno && process.platform === "linux" ? String(PIPE_BYTES) : "undefined";
  assert.equal(await enlargedInChild(["-A"]), expected);
});

Deno.test("enlargePipe: without the FFI permission it does nothing, and asks nothing", async () => {
  if (!deno) return;
  assert.equal(await enlargedInChild(["--allow-read", "--allow-env"]), "undefined");
});

Deno.test("enlargePipe: a call the kernel refuses returns undefined", () => {
  // fd -1 is never open: fcntl fails, and nothing throws.
  assert.equal(enlargePipe(-1), undefined);
});

Deno.test("enlargeStreamPipe: a child's pipe grows from this end, and holds what it says", async () => {
  // The child never reads: 900 KiB fit only in the enlarged pipe, so the
  // write completes before the child exits (and breaks the pipe) only then.
  const child = spawn("sleep", ["3"], { stdio: ["pipe", "ignore", "inherit"] });
  try {
    const granted = enlargeStreamPipe(child.stdin);
    if (!deno || process.platform !== "linux") {
      assert.equal(granted, undefined);
      return;
    }
    assert.equal(granted, PIPE_BYTES);
    child.stdin.on("error", () => {});
    const written = await new Promise<boolean>((resolve) => {
      child.stdin.write(new Uint8Array(900 * 1024), (err) => resolve(!err));
      child.on("exit", () => resolve(false));
    });
    assert.ok(written, "900 KiB did not fit in the child's stdin pipe");
  } finally {
    await stopped(child);
  }
  assert.equal(enlargeStreamPipe({}), undefined);
  assert.equal(enlargeStreamPipe(null), undefined);
});

/** Kill `child` and wait until both its pipes closed (and gave their budget back). */
async function stopped(child: ChildProcess): Promise<void> {
  const closed = [child.stdin, child.stdout].filter((s) => s !== null && !s.closed).map((s) =>
    new Promise((resolve) => s!.once("close", resolve))
  );
  child.stdin?.destroy();
  child.stdout?.destroy();
  child.kill();
  await Promise.all(closed);
}

Deno.test("enlargeStreamPipe: pipes still open hold at most CHILD_PIPE_BUDGET", async () => {
  if (!deno || process.platform !== "linux") return;
  const children = Array.from(
    { length: CHILD_PIPE_BUDGET / PIPE_BYTES / 2 + 1 },
    () => spawn("cat", [], { stdio: ["pipe", "pipe", "inherit"] }),
  );
  try {
    const granted = children.flatMap((
      c,
    ) => [enlargeStreamPipe(c.stdin), enlargeStreamPipe(c.stdout)]);
    const budgetPipes = CHILD_PIPE_BUDGET / PIPE_BYTES;
    assert.deepEqual(granted.slice(0, budgetPipes), Array(budgetPipes).fill(PIPE_BYTES));
    assert.deepEqual(granted.slice(budgetPipes), [undefined, undefined]);
    // Closing one child's pipes gives their share back.
    await stopped(children[0]);
    assert.equal(enlargeStreamPipe(children[children.length - 1].stdin), PIPE_BYTES);
  } finally {
    await Promise.all(children.map(stopped));
  }
});
