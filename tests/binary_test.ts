/**
 * The single executable, black-box: built by `scripts/build_binary.ts`
 * (reused when its inputs are unchanged), copied alone into an empty
 * directory and run with an environment of only PATH and HOME, as it would
 * be on a bare host reached over ssh.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { ExecServerClient } from "../src/client/mod.ts";
import { VERSION } from "../src/version.ts";
import { checkPipe, checkPtyEcho, runCoreChecks } from "./core_checks.ts";
import { DIST_BINARY, ensureBinary } from "./binary_fixture.ts";
import { TestServer } from "./harness.ts";

const PATH = "/usr/bin:/bin";
const CHILD_ENV = { PATH };

function execFileOnce(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { ...opts, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(" ")} failed: ${err.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

/**
 * Run a command; ETXTBSY is retried. A freshly copied executable is "busy"
 * while any process forked during the copy (another test's spawn, in this
 * process's other threads) still holds the copy's write descriptor between
 * its fork and exec: a window of milliseconds.
 */
async function execFileText(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ stdout: string; stderr: string }> {
  for (let attempt = 0;; attempt++) {
    try {
      return await execFileOnce(cmd, args, opts);
    } catch (err) {
      if (attempt >= 40 || !/Text file busy|ETXTBSY/.test(String(err))) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** A scratch directory holding `bin/exec-server` alone and an empty `home/`. */
interface Sandbox {
  dir: string;
  bin: string;
  home: string;
}

async function sandbox(): Promise<Sandbox> {
  await ensureBinary();
  const dir = await mkdtemp(join(tmpdir(), "exec-server-binary-test-"));
  const binDir = join(dir, "bin");
  await mkdir(binDir);
  const bin = join(binDir, "exec-server");
  await copyFile(DIST_BINARY, bin);
  await chmod(bin, 0o755);
  assert.deepEqual(await readdir(binDir), ["exec-server"]);
  // Once it has run, it is no longer busy (see execFileText), so servers
  // the tests start from it never meet ETXTBSY.
  await execFileText(bin, ["--version"], { env: { PATH } });
  const home = join(dir, "home");
  await mkdir(home);
  return { dir, bin, home };
}

/**
 * The command running the binary from its own directory with nothing in the
 * environment but PATH, HOME and `extra`.
 */
function bareCommand(box: Sandbox, home: string, extra: Record<string, string> = {}): string[] {
  return [
    "env",
    "-i",
    "-C",
    join(box.dir, "bin"),
    `PATH=${PATH}`,
    `HOME=${home}`,
    ...Object.entries(extra).map(([k, v]) => `${k}=${v}`),
    box.bin,
  ];
}

/**
 * A directory path nobody can create files in. Root ignores permission
 * bits, so for root the path goes through a regular file instead.
 */
async function unusableDir(box: Sandbox, name: string): Promise<string> {
  if (process.getuid?.() === 0) {
    const file = join(box.dir, `${name}-is-a-file`);
    await writeFile(file, "");
    return join(file, name);
  }
  const dir = join(box.dir, name);
  await mkdir(dir, { mode: 0o555 });
  return dir;
}

async function isSingleExecutable(box: Sandbox): Promise<boolean> {
  const [cmd, ...args] = bareCommand(box, box.home);
  const { stdout } = await execFileText(cmd, [...args, "--version"]);
  return stdout.includes("(single executable)");
}

/** Every file under `dir`, relative, sorted. */
async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

Deno.test("binary: --version names the version and the runtime inside", async () => {
  const box = await sandbox();
  try {
    const [cmd, ...args] = bareCommand(box, box.home);
    const { stdout } = await execFileText(cmd, [...args, "--version"]);
    assert.match(
      stdout,
      new RegExp(
        `^exec-server ${
          VERSION.replaceAll(".", "\\.")
        } \\((node v\\d+\\.\\d+\\.\\d+ \\(single executable\\)|deno \\S+)\\)\\n$`,
      ),
    );
    // --version starts nothing and needs no addon: the home stays empty.
    assert.deepEqual(await listTree(box.home), []);
  } finally {
    await rm(box.dir, { recursive: true, force: true });
  }
});

Deno.test("binary: core checks alone in an empty directory with only PATH and HOME", async () => {
  const box = await sandbox();
  try {
    const sea = await isSingleExecutable(box);
    await using s = await TestServer.start([], { command: bareCommand(box, box.home) });
    const ran = await runCoreChecks(s, { env: CHILD_ENV, dir: box.dir });
    assert.deepEqual(ran.slice(0, 4), ["handshake", "pipe", "pty echo", "terminate"]);
    // The addon's write-behind (node-pty patched at install or build time).
    assert.equal(ran.includes("write-behind"), process.platform === "linux", `ran ${ran}`);
    assert.equal((await s.close()).code, 0);
    assert.deepEqual(s.badLines, []);
    if (!sea) return;

    // The addon was cached under ~/.cache/exec-server/<version>-<sha>/, privately.
    const cacheRoot = join(box.home, ".cache/exec-server");
    const dirs = await readdir(cacheRoot);
    assert.equal(dirs.length, 1, `cache holds ${dirs}`);
    assert.match(dirs[0], new RegExp(`^${VERSION.replaceAll(".", "\\.")}-[0-9a-f]{16}$`));
    const cacheDir = join(cacheRoot, dirs[0]);
    assert.equal((await stat(cacheDir)).mode & 0o777, 0o700);
    assert.deepEqual(await readdir(cacheDir), ["pty.node"]);
    const first = await stat(join(cacheDir, "pty.node"));
    assert.equal(first.mode & 0o077, 0, "the cached addon is readable by others");

    // A second server loads the cached file as it is.
    await using again = await TestServer.start([], { command: bareCommand(box, box.home) });
    await checkPtyEcho(again, CHILD_ENV);
    await again.close();
    const second = await stat(join(cacheDir, "pty.node"));
    assert.equal(second.ino, first.ino);
    assert.equal(second.mtimeMs, first.mtimeMs);
  } finally {
    await rm(box.dir, { recursive: true, force: true });
  }
});

Deno.test("binary: an unwritable HOME falls back to a temporary directory, then cleans it", async () => {
  const box = await sandbox();
  try {
    const sea = await isSingleExecutable(box);
    const home = await unusableDir(box, "home");
    const tmp = join(box.dir, "tmp");
    await mkdir(tmp);
    const command = bareCommand(box, home, { TMPDIR: tmp });
    await using s = await TestServer.start([], { command });
    const ran = await runCoreChecks(s, { env: CHILD_ENV, dir: box.dir });
    assert.ok(ran.includes("pty echo"));
    await s.close();
    if (sea) assert.deepEqual(await listTree(tmp), [], "the temporary copy was left behind");
  } finally {
    await rm(box.dir, { recursive: true, force: true });
  }
});

Deno.test("binary: with neither HOME nor TMPDIR usable, PTY starts fail clearly and pipes still work", async () => {
  const box = await sandbox();
  try {
    if (!(await isSingleExecutable(box))) return;
    const home = await unusableDir(box, "home");
    const tmp = await unusableDir(box, "tmp");
    await using s = await TestServer.start([], {
      command: bareCommand(box, home, { TMPDIR: tmp }),
    });
    const res = await s.start("pty", ["/bin/true"], { env: CHILD_ENV, tty: true });
    assert.ok(res.error, `a PTY started without its addon: ${JSON.stringify(res)}`);
    assert.match(res.error.message, /pty\.node/);
    assert.ok(res.error.message.includes(home), res.error.message);
    assert.ok(res.error.message.includes(tmp), res.error.message);
    await checkPipe(s, CHILD_ENV);
    assert.equal((await s.close()).code, 0);
  } finally {
    await rm(box.dir, { recursive: true, force: true });
  }
});

Deno.test("binary: serves a websocket (ws is bundled, import() works inside the binary)", async () => {
  const box = await sandbox();
  const [cmd, ...args] = bareCommand(box, box.home);
  const child = spawn(cmd, [...args, "--listen", "ws://127.0.0.1:0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  try {
    let stderr = "";
    child.stderr!.setEncoding("utf8");
    const bound = await new Promise<{ url: string; token: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL on stderr: ${stderr}`)), 20_000);
      child.stderr!.on("data", (d: string) => {
        stderr += d;
        const url = /listening on (ws:\/\/\S+)/.exec(stderr)?.[1];
        const token = /auth token: (\S+)/.exec(stderr)?.[1];
        if (url && token) {
          clearTimeout(timer);
          resolve({ url, token });
        }
      });
      child.on("exit", (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
    });
    const client = await ExecServerClient.connectWebSocket(bound.url, { token: bound.token });
    try {
      const res = await client.run({ argv: ["/bin/sh", "-c", "tty"], tty: true, env: CHILD_ENV });
      assert.equal(res.exitCode, 0);
      assert.match(res.stdout, /^\/dev\/pts\/\d+\r\n$/);
      // Big masked frames go through the bundled word-wise unmasking
      // (src/runtime/ws_bufferutil.ts); an odd size leaves a tail of bytes.
      const data = new Uint8Array(randomBytes(300_001));
      await client.fs.writeFile(`${box.dir}/ws.bin`, data);
      assert.deepEqual(new Uint8Array(await readFile(`${box.dir}/ws.bin`)), data);
    } finally {
      await client.close();
    }
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    // Not child.kill(): Deno then reports the signal it sent, not the real exit.
    process.kill(child.pid!, "SIGTERM");
    assert.equal(await exited, 0);
    assert.doesNotMatch(stderr, /Warning|Error/, stderr);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await rm(box.dir, { recursive: true, force: true });
  }
});
