import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { DIRECT_WRITE_BYTES, directPipeWriter } from "./direct_write.ts";

const linux = process.platform === "linux";

/** The descriptor under a `node:child_process` stream (Deno shows it). */
function fdOf(stream: unknown): number {
  return (stream as { _handle: { fd: number } })._handle.fd;
}

Deno.test({
  name: "directPipeWriter: small writes go through at once, in order, and arrive whole",
  ignore: !linux,
  fn: async () => {
    const child = spawn("cat", { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => out += d);
    const exited = new Promise((resolve) => child.on("exit", resolve));
    const direct = directPipeWriter(fdOf(child.stdin))!;
    assert.ok(direct, "a pipe under Deno with --allow-ffi gets a direct writer");
    const encoder = new TextEncoder();
    for (const word of ["one ", "two ", "three\n"]) {
      const bytes = encoder.encode(word);
      assert.equal(direct(bytes), bytes.byteLength);
    }
    assert.equal(direct(new Uint8Array(0)), 0, "nothing to write");
    assert.equal(direct(new Uint8Array(DIRECT_WRITE_BYTES + 1)), 0, "too big: left to the caller");
    child.stdin.end();
    await exited;
    assert.equal(out, "one two three\n");
  },
});

Deno.test({
  name: "directPipeWriter: a pipe without room is left alone instead of blocking",
  ignore: !linux,
  fn: () => {
    // The child never reads: every byte written stays in the pipe.
    const child = spawn("sleep", ["30"], { stdio: ["pipe", "ignore", "inherit"] });
    try {
      const direct = directPipeWriter(fdOf(child.stdin))!;
      const piece = new Uint8Array(DIRECT_WRITE_BYTES);
      let written = 0;
      for (let i = 0; i < 1000; i++) {
        const n = direct(piece);
        if (n === 0) break;
        assert.equal(n, piece.byteLength);
        written += n;
      }
      assert.ok(written > 0, "nothing was written");
      // The kernel's default pipe holds 64 KiB; an enlarged one 1 MiB.
      assert.ok(written <= 1024 * 1024, `${written} bytes went into a pipe nobody reads`);
    } finally {
      child.kill();
      child.stdin.destroy();
    }
  },
});

Deno.test("directPipeWriter: none for a regular file or a closed descriptor", async () => {
  const dir = await mkdtemp(join(tmpdir(), "direct-write-"));
  const handle = await open(join(dir, "file"), "w");
  try {
    assert.equal(directPipeWriter(handle.fd), null);
    assert.equal(directPipeWriter(-1), null);
  } finally {
    await handle.close();
    await rm(dir, { recursive: true, force: true });
  }
});
