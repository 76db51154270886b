/**
 * One contract, three environments: `Environment.local()`, and
 * `Environment.remote(client)` over an in-process server and over the real
 * server on stdio. Every case runs unchanged against each, and the error
 * cases are compared across them field by field.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  connectInProcess,
  Environment,
  ExecServerClient,
  FileSystemError,
  ProcessError,
  SpawnError,
} from "../mod.ts";
import { ROOT, serverCommand } from "./harness.ts";

const text = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** An environment under test and how to dispose of it. */
interface Subject {
  env: Environment;
  close(): Promise<void>;
}

type Factory = () => Promise<Subject>;

/** A remote environment over `client`; the environment does not own the client, so close both. */
function remoteSubject(client: ExecServerClient): Subject {
  const env = Environment.remote(client);
  return {
    env,
    close: async () => {
      await env.close();
      await client.close();
    },
  };
}

const factories: Record<string, Factory> = {
  local: () => {
    const env = Environment.local();
    return Promise.resolve({ env, close: () => env.close() });
  },
  "remote in-process": async () => remoteSubject(await connectInProcess()),
  "remote stdio": async () => {
    const [cmd, ...args] = serverCommand();
    return remoteSubject(await ExecServerClient.spawnStdio(cmd, args, { cwd: ROOT }));
  },
};

/** The contract every environment meets. */
function environmentContract(name: string, factory: Factory): void {
  Deno.test(`environment contract: ${name}`, async (t) => {
    const { env, close } = await factory();
    const dir = mkdtempSync(join(tmpdir(), "env-contract-"));
    try {
      await t.step("run: output, exit code, defaults", async () => {
        const r = await env.process.run(["sh", "-c", "echo out; echo err >&2; exit 3"]);
        assert.equal(r.exitCode, 3);
        assert.equal(r.signal, null);
        assert.equal(r.stdout, "out\n");
        assert.equal(r.stderr, "err\n");
        assert.deepEqual(r.stdoutBytes, text("out\n"));
        assert.equal(r.timedOut, false);
        assert.ok(r.durationMs >= 0);
        // Nothing inherited: the default environment is exactly a PATH.
        const e = await env.process.run(["env"]);
        assert.equal(e.stdout, "PATH=/usr/local/bin:/usr/bin:/bin\n");
        assert.equal((await env.process.run(["pwd"])).stdout, "/\n");
        const c = await env.process.run({ argv: ["pwd"], cwd: dir, env: { X: "1" } });
        assert.equal(c.stdout, `${dir}\n`);
      });

      await t.step("spawn: streamed output in order with seq", async () => {
        const p = await env.process.spawn({
          argv: ["sh", "-c", "printf a; printf b >&2; sleep 0.05; printf c"],
        });
        const chunks: string[] = [];
        let last = 0;
        for await (const chunk of p.output) {
          assert.ok(chunk.seq > last);
          last = chunk.seq;
          chunks.push(`${chunk.stream}:${decode(chunk.data)}`);
        }
        assert.equal((await p.wait()).exitCode, 0);
        assert.deepEqual(chunks.filter((c) => c.startsWith("stdout")).join(""), "stdout:astdout:c");
        assert.ok(chunks.includes("stderr:b"));
        assert.deepEqual(p.exit?.exitCode, 0);
      });

      await t.step("stdin: write, closeStdin, and errors after", async () => {
        const p = await env.process.spawn({ argv: ["cat"], pipeStdin: true });
        await p.write("one ");
        await p.write(text("two"));
        await p.closeStdin();
        const r = await p.collect();
        assert.equal(r.stdout, "one two");
        assert.equal(r.exitCode, 0);
        await assert.rejects(p.write("late"), ProcessError);
        const fed = await env.process.run(["wc", "-c"], { stdin: "12345" });
        assert.equal(fed.stdout.trim(), "5");
        // Input a process never reads is not an error.
        const ignored = await env.process.run(["true"], { stdin: "x".repeat(1 << 20) });
        assert.equal(ignored.exitCode, 0);
        const closed = await env.process.spawn({ argv: ["sleep", "5"] });
        await assert.rejects(closed.write("x"), ProcessError);
        await closed.terminate();
        await closed.wait();
      });

      await t.step("tty: a terminal of the given size, one pty stream", async () => {
        const r = await env.process.run({
          argv: ["sh", "-c", "test -t 0 && test -t 1 && echo on-a-tty; stty size"],
          tty: true,
          size: { rows: 31, cols: 101 },
        });
        assert.equal(r.exitCode, 0);
        assert.match(r.stdout, /on-a-tty\r?\n31 101/);
        assert.equal(r.stderr, "");
        const cat = await env.process.spawn({ argv: ["cat"], tty: true });
        const streams = new Set<string>();
        await cat.write("typed\n");
        await cat.resize({ rows: 10, cols: 20 });
        await cat.closeStdin();
        let out = "";
        for await (const chunk of cat.output) {
          streams.add(chunk.stream);
          out += decode(chunk.data);
        }
        assert.deepEqual([...streams], ["pty"]);
        assert.match(out, /typed/);
        assert.equal((await cat.wait()).exitCode, 0);
      });

      await t.step("terminate and signal", async () => {
        const p = await env.process.spawn({ argv: ["sleep", "30"] });
        assert.equal(await p.terminate(), true);
        assert.deepEqual(
          { ...(await p.wait()), durationMs: 0 },
          { exitCode: 137, signal: "SIGKILL", durationMs: 0 },
        );
        assert.equal(await p.terminate(), false);

        const graceful = await env.process.spawn({
          argv: [
            "sh",
            "-c",
            "trap 'echo got-term; exit 5' TERM; echo ready; while :; do sleep 0.02; done",
          ],
        });
        const reader = graceful.output.getReader();
        assert.equal(decode((await reader.read()).value!.data), "ready\n");
        assert.equal(await graceful.terminate({ graceMs: 10_000 }), true);
        let rest = "";
        while (true) {
          const { done, value } = await reader.read();
          if (done) break;
          // The shell may also report its killed `sleep` on stderr; that race is not ours.
          if (value.stream === "stdout") rest += decode(value.data);
        }
        assert.equal(rest, "got-term\n");
        assert.equal((await graceful.wait()).exitCode, 5);

        const interrupted = await env.process.spawn({ argv: ["sleep", "30"] });
        await interrupted.signal("interrupt");
        assert.deepEqual((await interrupted.wait()).signal, "SIGINT");
        assert.equal(interrupted.exit?.exitCode, 130);
        await assert.rejects(interrupted.signal("SIGTERM"), ProcessError);
        await assert.rejects(interrupted.resize({ rows: 1, cols: 1 }), ProcessError);

        const pipe = await env.process.spawn({ argv: ["sleep", "30"] });
        await assert.rejects(pipe.resize({ rows: 5, cols: 5 }), ProcessError);
        await assert.rejects(pipe.signal("SIGBOGUS"), ProcessError);
        await assert.rejects(pipe.resize({ rows: 0, cols: 5 }), TypeError);
        await pipe.terminate();
        await pipe.wait();

        const timed = await env.process.run(["sleep", "30"], { timeoutMs: 50 });
        assert.equal(timed.timedOut, true);
        assert.equal(timed.exitCode, 137);
      });

      await t.step("spawn failures", async () => {
        await assert.rejects(env.process.spawn({ argv: ["/no/such/program"] }), {
          name: "SpawnError",
          errno: "ENOENT",
        });
        await assert.rejects(env.process.spawn({ argv: ["no-such-program-xyz"] }), {
          name: "SpawnError",
          errno: "ENOENT",
        });
        const err = await env.process.spawn({ argv: ["ls"], cwd: `${dir}/missing` }).then(
          () => assert.fail("should reject"),
          (e) => e,
        );
        assert.ok(err instanceof SpawnError);
        assert.equal(err.errno, "ENOENT");
        await assert.rejects(env.process.spawn({ argv: ["ls"], cwd: "relative" }), TypeError);
        await assert.rejects(env.process.spawn({ argv: [] }), TypeError);
      });

      await t.step("fs: round trip", async () => {
        const fs = env.fs;
        const bytes = new Uint8Array(1024).map((_, i) => (i * 7) & 255);
        await fs.createDirectory(`${dir}/a/b/c`);
        await fs.writeFile(`${dir}/a/b/c/data.bin`, bytes);
        await fs.writeFile(`${dir}/a/top.txt`, text("top"));
        assert.deepEqual(await fs.readFile(`${dir}/a/b/c/data.bin`), bytes);
        const meta = await fs.getMetadata(`${dir}/a/top.txt`);
        assert.equal(meta.isFile, true);
        assert.equal(meta.isDirectory, false);
        assert.ok(meta.modifiedAtMs > 0);
        assert.equal((await fs.getMetadata(`file://${dir}/a`)).isDirectory, true);
        const entries = (await fs.readDirectory(`${dir}/a`))
          .sort((x, y) => x.fileName.localeCompare(y.fileName));
        assert.deepEqual(entries, [
          { fileName: "b", isDirectory: true, isFile: false },
          { fileName: "top.txt", isDirectory: false, isFile: true },
        ]);
        await fs.copy(`${dir}/a/top.txt`, `${dir}/copy.txt`);
        assert.equal(decode(await fs.readFile(`${dir}/copy.txt`)), "top");
        await fs.copy(`${dir}/a`, `${dir}/a2`, { recursive: true });
        assert.deepEqual(await fs.readFile(`${dir}/a2/b/c/data.bin`), bytes);
        await fs.writeFile(`${dir}/copy.txt`, new Uint8Array());
        assert.equal((await fs.readFile(`${dir}/copy.txt`)).byteLength, 0);
        await fs.remove(`${dir}/a2`);
        await fs.remove(`${dir}/a2`); // force is the default: missing is fine
        await assert.rejects(fs.getMetadata(`${dir}/a2`), { errno: "ENOENT" });
        symlinkSync(`${dir}/a/top.txt`, `${dir}/link`);
        assert.equal((await fs.getMetadata(`${dir}/link`)).isFile, true);
      });

      await t.step("fs: ranges, in-place writes, rename and streams", async () => {
        const fs = env.fs;
        await fs.createDirectory(`${dir}/s`);
        await fs.writeFile(`${dir}/s/log`, text("one "), { append: true });
        await fs.writeFile(`${dir}/s/log`, text("two"), { append: true });
        await fs.writeFile(`${dir}/s/log`, text("ONE"), { offset: 0 });
        const r = await fs.readRange(`${dir}/s/log`, { offset: 4, length: 10 });
        assert.deepEqual([decode(r.data), r.size, r.eof], ["two", 7, true]);
        await fs.rename(`${dir}/s/log`, `${dir}/s/moved`);
        assert.equal(decode(await fs.readFile(`${dir}/s/moved`)), "ONE two");
        const big = new Uint8Array(3 * 1024 * 1024 + 5).map((_, i) => (i * 31) & 255);
        await new Blob([big]).stream().pipeTo(fs.writeStream(`${dir}/s/big`));
        const back = new Uint8Array(big.byteLength);
        let at = 0;
        for await (const chunk of fs.readStream(`${dir}/s/big`)) {
          back.set(chunk, at);
          at += chunk.byteLength;
        }
        assert.deepEqual([at, back], [big.byteLength, big]);
        const aborted = fs.writeStream(`${dir}/s/aborted`).getWriter();
        await aborted.write(big);
        await aborted.abort(new Error("stop"));
        const names = (await fs.readDirectory(`${dir}/s`)).map((e) => e.fileName);
        assert.deepEqual(names, ["big", "moved"], "no aborted file, no temp file");
      });

      await t.step("fs.walk: breadth first, bounded, symlinked directories once", async () => {
        const fs = env.fs;
        await fs.createDirectory(`${dir}/w/a/deep`);
        await fs.createDirectory(`${dir}/w/.hidden`);
        await fs.writeFile(`${dir}/w/b.txt`, text("b"));
        await fs.writeFile(`${dir}/w/a/deep/c.txt`, text("c"));
        symlinkSync(`${dir}/w/a`, `${dir}/w/link`);
        const rel = (r: { entries: { path: string; kind: string }[] }) =>
          r.entries.map((e) => `${e.kind[0]}:${e.path.slice(dir.length + 3)}`);
        const all = await fs.walk(`${dir}/w`, { followDirectorySymlinks: true });
        // The link is listed, but the directory it leads to is read once.
        assert.deepEqual(rel(all), [
          "d:.hidden",
          "d:a",
          "f:b.txt",
          "d:link",
          "d:a/deep",
          "f:a/deep/c.txt",
        ]);
        assert.equal(all.truncated, false);
        const bounded = await fs.walk(`${dir}/w`, { maxEntries: 2, pruneHiddenDirectories: true });
        assert.deepEqual([rel(bounded), bounded.truncated], [["d:.hidden", "d:a"], true]);
      });

      await t.step("fs: errors carry the same class, kind and errno", async () => {
        for (const c of fsErrorCases(dir)) {
          const err = await c.run(env).then(
            () => assert.fail(`${c.name}: should reject`),
            (e) => e,
          );
          assert.ok(err instanceof FileSystemError, `${c.name}: ${String(err)}`);
          assert.equal(err.errno, c.errno, `${c.name}: ${err.message}`);
          assert.equal(err.kind, c.kind, `${c.name}: ${err.message}`);
        }
      });
    } finally {
      await close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** Read a stream to its end. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  for await (const _ of stream) { /* discard */ }
}

/** Stream a few bytes into `path`. */
function upload(fs: Environment["fs"], path: string): Promise<void> {
  return new Blob([text("streamed")]).stream().pipeTo(fs.writeStream(path));
}

interface FsErrorCase {
  name: string;
  errno: string;
  kind: "io" | "invalidInput";
  run(env: Environment): Promise<unknown>;
}

/** Failures every filesystem reports alike; `dir` is prepared by `prepareErrorTree`. */
function fsErrorCases(dir: string): FsErrorCase[] {
  const prep = async (env: Environment) => {
    await env.fs.createDirectory(`${dir}/e/sub`);
    await env.fs.writeFile(`${dir}/e/file`, text("f"));
    await env.fs.writeFile(`${dir}/e/sub/inner`, text("i"));
  };
  const c = (
    name: string,
    errno: string,
    kind: "io" | "invalidInput",
    run: (env: Environment) => Promise<unknown>,
  ): FsErrorCase => ({ name, errno, kind, run: async (env) => (await prep(env), run(env)) });
  return [
    c("read a missing file", "ENOENT", "io", (e) => e.fs.readFile(`${dir}/e/missing`)),
    c("read a directory", "EISDIR", "io", (e) => e.fs.readFile(`${dir}/e/sub`)),
    c("metadata of a missing path", "ENOENT", "io", (e) => e.fs.getMetadata(`${dir}/nope`)),
    c("mkdir below a file", "ENOTDIR", "io", (e) => e.fs.createDirectory(`${dir}/e/file/x`)),
    c(
      "mkdir without parents",
      "ENOENT",
      "io",
      (e) => e.fs.createDirectory(`${dir}/e/none/x`, { recursive: false }),
    ),
    c(
      "mkdir an existing dir without recursive",
      "EEXIST",
      "io",
      (e) => e.fs.createDirectory(`${dir}/e/sub`, { recursive: false }),
    ),
    c("list a file", "ENOTDIR", "io", (e) => e.fs.readDirectory(`${dir}/e/file`)),
    c("list a missing dir", "ENOENT", "io", (e) => e.fs.readDirectory(`${dir}/e/gone`)),
    c("write over a directory", "EISDIR", "io", (e) => e.fs.writeFile(`${dir}/e/sub`, text("x"))),
    c(
      "write below a missing dir",
      "ENOENT",
      "io",
      (e) => e.fs.writeFile(`${dir}/e/gone/f`, text("x")),
    ),
    c(
      "remove missing without force",
      "ENOENT",
      "io",
      (e) => e.fs.remove(`${dir}/e/gone`, { force: false }),
    ),
    c(
      "remove a non-empty dir without recursive",
      "ENOTEMPTY",
      "io",
      (e) => e.fs.remove(`${dir}/e/sub`, { recursive: false }),
    ),
    c(
      "copy a directory into itself",
      "EINVAL",
      "invalidInput",
      (e) => e.fs.copy(`${dir}/e`, `${dir}/e/sub/again`, { recursive: true }),
    ),
    c(
      "copy a directory without recursive",
      "EISDIR",
      "invalidInput",
      (e) => e.fs.copy(`${dir}/e/sub`, `${dir}/e/sub2`),
    ),
    c("copy a missing source", "ENOENT", "io", (e) => e.fs.copy(`${dir}/e/gone`, `${dir}/e/x`)),
    c("a relative path", "EINVAL", "invalidInput", (e) => e.fs.readFile("relative/path")),
    c(
      "a negative range offset",
      "EINVAL",
      "invalidInput",
      (e) => e.fs.readRange(`${dir}/e/file`, { offset: -1 }),
    ),
    c("a range of a directory", "EISDIR", "io", (e) => e.fs.readRange(`${dir}/e/sub`, {})),
    c(
      "append to a directory",
      "EISDIR",
      "io",
      (e) => e.fs.writeFile(`${dir}/e/sub`, text("x"), { append: true }),
    ),
    c(
      "append and offset together",
      "EINVAL",
      "invalidInput",
      (e) => e.fs.writeFile(`${dir}/e/file`, text("x"), { append: true, offset: 0 }),
    ),
    c("rename a missing source", "ENOENT", "io", (e) => e.fs.rename(`${dir}/e/gone`, `${dir}/x`)),
    c(
      "rename a file over a directory",
      "EISDIR",
      "io",
      (e) => e.fs.rename(`${dir}/e/file`, `${dir}/e/sub`),
    ),
    c("stream a missing file", "ENOENT", "io", (e) => drain(e.fs.readStream(`${dir}/e/gone`))),
    c("stream a directory", "EISDIR", "io", (e) => drain(e.fs.readStream(`${dir}/e/sub`))),
    c("stream onto a directory", "EISDIR", "io", (e) => upload(e.fs, `${dir}/e/sub`)),
    c("stream below a missing dir", "ENOENT", "io", (e) => upload(e.fs, `${dir}/e/gone/f`)),
  ];
}

for (const [name, factory] of Object.entries(factories)) environmentContract(name, factory);

Deno.test("environment contract: errors are identical across environments", async () => {
  const subjects = await Promise.all(Object.values(factories).map((f) => f()));
  const dir = mkdtempSync(join(tmpdir(), "env-compare-"));
  try {
    for (const c of fsErrorCases(dir)) {
      const seen = await Promise.all(subjects.map(async ({ env }) => {
        const err = await c.run(env).then(() => undefined, (e) => e);
        return err instanceof FileSystemError
          ? { class: err.constructor.name, kind: err.kind, errno: err.errno, message: err.message }
          : { unexpected: String(err) };
      }));
      for (const other of seen.slice(1)) assert.deepEqual(other, seen[0], c.name);
    }
    const spawnErrors = await Promise.all(subjects.map(async ({ env }) => {
      const err = await env.process.spawn({ argv: ["no-such-program-xyz"] }).then(
        () => undefined,
        (e) => e,
      );
      return { class: err?.constructor.name, errno: err?.errno };
    }));
    for (const other of spawnErrors) {
      assert.deepEqual(other, { class: "SpawnError", errno: "ENOENT" });
    }
  } finally {
    await Promise.all(subjects.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  }
});
