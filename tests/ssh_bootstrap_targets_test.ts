/**
 * `connectSsh({bootstrap})` with compression and several targets: the
 * upload crosses the wire gzipped (counted on ssh's stdin), the remote's
 * `uname` picks among the binaries offered, a host without gzip gets the
 * binary raw, and a `<binary>.gz` beside the binary is used when it fits.
 *
 * The end-to-end test goes through a real OpenSSH server on 127.0.0.1 (see
 * ssh_fixture.ts) with a copy of the real `dist/exec-server`; the others
 * replace ssh with a local stand-in that runs the remote command under
 * `/bin/sh` with a PATH the test chooses, or run the script itself.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { gunzipSync, gzipSync } from "node:zlib";
import {
  BootstrapError,
  type BootstrapEvent,
  ExecServerClient,
  shellQuote,
  type SshBootstrapOptions,
} from "../mod.ts";
import { bootstrapScript } from "../src/client/ssh_bootstrap.ts";
import { ProgressLine } from "../src/client/ssh_bootstrap/progress_line.ts";
import { DIST_BINARY, ensureBinary } from "./binary_fixture.ts";
import { sshdMissingReason, startSshd } from "./ssh_fixture.ts";

// Skipped when sshd is missing; ssh_test.ts prints the one line that says why.
const sshdMissing = sshdMissingReason();
const here = process.arch === "arm64" ? "linux-arm64" : "linux-x64";
const herePlatform = `Linux/${process.arch === "arm64" ? "aarch64" : "x86_64"}`;

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** A fake binary: the given header, padded to 100 kB. */
async function fakeBinary(path: string, header: number[]): Promise<string> {
  const bytes = new Uint8Array(100_000);
  bytes.set(header);
  await writeFile(path, bytes, { mode: 0o755 });
  return path;
}
const aarch64Elf = [0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, ...new Array(10).fill(0), 0xb7, 0];
const arm64MachO = [0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 0x01];

/** Connect, recording the bootstrap's events. */
async function connect(
  sshCommand: string,
  bootstrap: SshBootstrapOptions,
  more: { sshArgs?: string[]; destination?: string } = {},
  events: BootstrapEvent[] = [],
): Promise<{ client: ExecServerClient; events: BootstrapEvent[] }> {
  const client = await ExecServerClient.connectSsh(more.destination ?? "me@fake-host", {
    sshCommand,
    sshArgs: more.sshArgs,
    serverArgs: ["--log-level", "warn"],
    initializeTimeoutMs: 60_000,
    closeTimeoutMs: 2000,
    bootstrap: { timeoutMs: 60_000, ...bootstrap, onProgress: (e) => events.push(e) },
  });
  return { client, events };
}

/** Connect, check that the server answers, close; the events. */
async function session(
  sshCommand: string,
  bootstrap: SshBootstrapOptions,
  more: { sshArgs?: string[]; destination?: string } = {},
): Promise<BootstrapEvent[]> {
  const { client, events } = await connect(sshCommand, bootstrap, more);
  try {
    assert.equal((await client.run(["echo", "hi"])).stdout, "hi\n");
  } finally {
    await client.close();
  }
  return events;
}

async function connectFails(
  sshCommand: string,
  bootstrap: SshBootstrapOptions,
  more: { sshArgs?: string[]; destination?: string; events?: BootstrapEvent[] } = {},
): Promise<unknown> {
  return await connect(sshCommand, bootstrap, more, more.events).then(
    async ({ client }) => {
      await client.close();
      assert.fail("connectSsh should have failed");
    },
    (e: unknown) => e,
  );
}

function find<K extends BootstrapEvent["kind"]>(
  events: BootstrapEvent[],
  kind: K,
): Extract<BootstrapEvent, { kind: K }> {
  const e = events.find((e) => e.kind === kind);
  assert.ok(e, `a ${kind} event in ${JSON.stringify(events)}`);
  return e as Extract<BootstrapEvent, { kind: K }>;
}

/** Run `fn` with process.stderr.write captured; what it wrote. */
async function capturingStderr(fn: () => Promise<void>): Promise<string> {
  const original = process.stderr.write;
  let text = "";
  process.stderr.write = ((chunk: string | Uint8Array) => {
    text += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stderr.write = original;
  }
  return text;
}

let fakes = 0;

/** A stand-in for ssh that runs the remote command locally with only `env`. */
async function fakeSsh(dir: string, env: Record<string, string>): Promise<string> {
  const path = join(dir, `fake-ssh-${++fakes}`);
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`).join(" ");
  await writeFile(
    path,
    `#!/bin/sh\nfor last; do :; done\nexec env -i ${assignments} /bin/sh -c "$last"\n`,
    { mode: 0o755 },
  );
  return path;
}

/** A PATH of links to `tools` only; by default what the script needs, minus gzip. */
async function toolDir(
  dir: string,
  tools = "sh head mkdir chmod rm wc mv id uname ls cat",
): Promise<string> {
  const bin = join(dir, `bin-${++fakes}`);
  await mkdir(bin);
  for (const tool of tools.split(" ")) {
    const where = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout;
    await symlink(where.trim(), join(bin, tool));
  }
  return bin;
}

/** A small server "binary": a script that runs the real one, padded to about 200 kB. */
async function standIn(dir: string): Promise<string> {
  await ensureBinary();
  const path = join(dir, "server");
  const lines = Array.from({ length: 4000 }, (_, i) => `# padding line ${i * 7919 % 10007}`);
  await writeFile(path, `#!/bin/sh\nexec ${DIST_BINARY} "$@"\n${lines.join("\n")}\n`, {
    mode: 0o755,
  });
  return path;
}

Deno.test({
  name: "bootstrap over ssh: the upload crosses the wire gzipped, the host's target is chosen",
  ignore: sshdMissing !== undefined,
  async fn(t) {
    await ensureBinary();
    const sshd = await startSshd();
    try {
      // A private copy: a rebuild of dist/ during the test must not change it.
      const bin = join(sshd.dir, "bin");
      await mkdir(bin);
      const binary = join(bin, "exec-server-local");
      await copyFile(DIST_BINARY, binary);
      const bytes = await readFile(binary);
      const remoteDir = join(sshd.dir, "remote-cache");
      const ssh = { sshArgs: sshd.sshArgs, destination: sshd.destination };

      await t.step("a first upload is gzip, at most 45% of the binary on the wire", async () => {
        // ssh's stdin, recorded on its way in: what really goes on the wire.
        const record = join(sshd.dir, "stdin.bin");
        const args = join(sshd.dir, "args.txt");
        const recording = sshd.writeScript(
          "recording-ssh",
          `#!/bin/bash\nprintf '%s\\n' "$@" > ${args}\nexec ssh "$@" < <(exec tee -- ${record})\n`,
        );
        let events: BootstrapEvent[] = [];
        const stderr = await capturingStderr(async () => {
          events = await session(
            recording,
            { localBinary: binary, remoteDir, progress: true },
            ssh,
          );
        });
        const upload = find(events, "upload");
        assert.equal(upload.target, here);
        assert.equal(upload.encoding, "gzip");
        assert.equal(upload.binaryBytes, bytes.byteLength);
        assert.ok(
          upload.wireBytes <= 0.45 * upload.binaryBytes,
          `${upload.wireBytes} bytes on the wire for a ${upload.binaryBytes}-byte binary`,
        );
        const progress = events.filter((e) => e.kind === "progress");
        assert.equal(progress.at(-1)?.sentBytes, upload.wireBytes);
        assert.deepEqual(find(events, "ready"), {
          kind: "ready",
          remotePath: upload.remotePath,
          target: here,
          uploaded: true,
        });
        // Redrawn in place on a terminal, written as lines elsewhere: the last one says it all.
        assert.match(
          stderr.replaceAll("\x1b[K", ""),
          /exec-server: uploaded linux-\w+ binary to \S+: (\d+\.\d)\/\1 MiB \(gzip, \d+\.\d MiB unpacked\)\n$/,
        );

        // The recording: the script, the header line, the upload, then JSON-RPC.
        const scriptBytes = Number(/head -c (\d+)/.exec(await readFile(args, "utf8"))![1]);
        const wire = await readFile(record);
        const headerEnd = wire.indexOf(0x0a, scriptBytes) + 1;
        const header = wire.subarray(scriptBytes, headerEnd).toString();
        assert.equal(header, `gzip ${upload.wireBytes}\n`);
        const sent = wire.subarray(headerEnd, headerEnd + upload.wireBytes);
        assert.equal(sent.byteLength, upload.wireBytes);
        assert.ok(header.length + sent.byteLength <= 0.45 * bytes.byteLength, "counted on stdin");
        assert.equal(sha256(gunzipSync(sent)), sha256(bytes), "the upload unpacks to the binary");
        assert.equal(wire[headerEnd + upload.wireBytes], "{".charCodeAt(0), "then JSON-RPC");
        assert.equal(sha256(await readFile(upload.remotePath)), sha256(bytes));
      });

      await t.step("a second connection runs the cached binary, silently", async () => {
        let events: BootstrapEvent[] = [];
        const stderr = await capturingStderr(async () => {
          events = await session("ssh", { localBinary: binary, remoteDir, progress: true }, ssh);
        });
        assert.deepEqual(events.map((e) => e.kind), ["ready"]);
        assert.equal(find(events, "ready").uploaded, false);
        assert.equal(stderr, "");
      });

      const armElf = await fakeBinary(join(sshd.dir, "fake-arm64"), aarch64Elf);
      const armMac = await fakeBinary(join(sshd.dir, "fake-darwin"), arm64MachO);

      await t.step("among several targets the host's is chosen (map and directory)", async () => {
        const other = here === "linux-x64" ? "linux-arm64" : "linux-x64";
        const offered = { [other]: armElf, [here]: binary };
        const events = await session("ssh", { binaries: offered, remoteDir }, ssh);
        assert.deepEqual(find(events, "ready"), {
          kind: "ready",
          remotePath: find(events, "ready").remotePath,
          target: here,
          uploaded: false, // the copy the first step uploaded
        });

        const dir = join(sshd.dir, "dist-like");
        await mkdir(dir);
        await copyFile(armElf, join(dir, "exec-server-linux-arm64"));
        await symlink(binary, join(dir, `exec-server-${here}`));
        await writeFile(join(dir, "exec-server-linux-x64.inputs"), "not a binary");
        const fromDir = await session("ssh", { binaries: dir, remoteDir }, ssh);
        assert.equal(find(fromDir, "ready").target, here);

        // A plain exec-server there: its header says what it is for.
        const plain = join(sshd.dir, "plain");
        await mkdir(plain);
        await symlink(binary, join(plain, "exec-server"));
        assert.equal(
          find(await session("ssh", { binaries: plain, remoteDir }, ssh), "ready").target,
          here,
        );
      });

      await t.step("no binary for the host: a clear error, nothing uploaded", async () => {
        const fresh = join(sshd.dir, "untouched-cache");
        const events: BootstrapEvent[] = [];
        const offered = { "linux-arm64": armElf, "darwin-arm64": armMac };
        const err = await connectFails("ssh", { binaries: offered, remoteDir: fresh }, {
          ...ssh,
          events,
        });
        assert.ok(err instanceof BootstrapError && err.kind === "platform", `${err}`);
        assert.equal(err.remotePlatform, herePlatform);
        const parts = [herePlatform, "linux-arm64", "darwin-arm64", armElf, `--target ${here}`];
        for (const part of parts) assert.ok(err.message.includes(part), `${part}: ${err.message}`);
        assert.deepEqual(events, []);
        assert.equal(existsSync(fresh), false, "nothing was created remotely");
      });
    } catch (err) {
      console.error(`sshd log:\n${sshd.log()}`);
      throw err;
    } finally {
      await sshd.stop();
    }
  },
});

Deno.test("bootstrap: options that contradict each other or a file's header are TypeErrors", async () => {
  const dir = await mkdtemp(join(tmpdir(), "exec-server-targets-"));
  try {
    const armElf = await fakeBinary(join(dir, "fake-arm64"), aarch64Elf);
    const ssh = "/bin/false"; // never reached
    const mismatch = new RegExp(
      `gives ${armElf} for linux-x64 \\(Linux/x86_64\\), but its header says Linux/aarch64`,
    );
    const cases: [SshBootstrapOptions, RegExp][] = [
      [{}, /exactly one of bootstrap\.localBinary and bootstrap\.binaries, got neither/],
      [{ localBinary: armElf, binaries: dir }, /localBinary and bootstrap\.binaries, got both/],
      [{ binaries: { "linux-x64": armElf } }, mismatch],
      [{ binaries: { "linux-s390": armElf } as never }, /unknown target "linux-s390"/],
      [{ binaries: {} }, /names no binary/],
      [{ binaries: { "linux-arm64": armElf }, platform: "any" }, /applies to bootstrap\.localB/],
    ];
    for (const [bootstrap, message] of cases) {
      const err = await connectFails(ssh, bootstrap);
      assert.ok(err instanceof TypeError, `${JSON.stringify(bootstrap)}: ${err}`);
      assert.match(err.message, message);
    }
    const empty = join(dir, "empty");
    await mkdir(empty);
    const err = await connectFails(ssh, { binaries: empty });
    assert.ok(err instanceof BootstrapError && err.kind === "local", `${err}`);
    assert.match(err.message, /holds no binary: neither exec-server-<target>/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("bootstrap: a remote without gzip gets the binary raw, one with gzip compressed", async () => {
  const dir = await mkdtemp(join(tmpdir(), "exec-server-targets-"));
  try {
    const binary = await standIn(dir);
    const size = (await readFile(binary)).byteLength;
    const bin = await toolDir(dir, "sh head mkdir chmod rm wc mv id uname ls cat sha256sum echo");
    const noGzip = await fakeSsh(dir, { HOME: join(dir, "home1"), PATH: bin });
    const raw = find(await session(noGzip, { localBinary: binary }), "upload");
    assert.deepEqual([raw.encoding, raw.wireBytes, raw.binaryBytes], ["raw", size, size]);

    const withGzip = await fakeSsh(dir, { HOME: join(dir, "home2"), PATH: "/usr/bin:/bin" });
    const gz = find(await session(withGzip, { localBinary: binary }), "upload");
    assert.equal(gz.encoding, "gzip");
    assert.ok(gz.wireBytes < size / 2, `${gz.wireBytes} of ${size}`);
    for (const home of ["home1", "home2"]) {
      const path = (home === "home1" ? raw : gz).remotePath;
      assert.ok(path.startsWith(join(dir, home)), path);
      assert.equal(sha256(await readFile(path)), sha256(await readFile(binary)));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("bootstrap: <binary>.gz is sent when it fits the binary; a damaged one fails as verify", async () => {
  const dir = await mkdtemp(join(tmpdir(), "exec-server-targets-"));
  try {
    const binary = await standIn(dir);
    const bytes = await readFile(binary);
    const sidecar = `${binary}.gz`;
    const ssh = await fakeSsh(dir, { HOME: join(dir, "home"), PATH: "/usr/bin:/bin" });
    let n = 0;
    const attempt = () =>
      connectFails(ssh, { localBinary: binary, remoteDir: join(dir, `r${++n}`) });
    const upload = async () =>
      find(await session(ssh, { localBinary: binary, remoteDir: join(dir, `r${++n}`) }), "upload");

    // Level 1: bigger than what the client would make, so its use shows.
    const fast = gzipSync(bytes, { level: 1 });
    await writeFile(sidecar, fast);
    assert.equal((await upload()).wireBytes, fast.byteLength, "the .gz is what is sent");

    // Same size unpacked, other bytes: sent as it is, caught by the remote's sha256 check.
    const other = new Uint8Array(bytes);
    other[bytes.byteLength - 2] ^= 1;
    await writeFile(sidecar, gzipSync(other, { level: 1 }));
    const wrong = await attempt();
    assert.ok(wrong instanceof BootstrapError && wrong.kind === "verify", `${wrong}`);
    assert.match(wrong.message, /a sha256 other than/);

    // A corrupt stream: gzip itself refuses it.
    const corrupt = new Uint8Array(fast);
    corrupt.fill(0x55, 100, 200);
    await writeFile(sidecar, corrupt);
    const damaged = await attempt();
    assert.ok(damaged instanceof BootstrapError && damaged.kind === "verify", `${damaged}`);
    assert.match(damaged.message, /gzip could not unpack it/);

    // Older than the binary, or for another size: not used, the client compresses.
    await utimes(sidecar, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    assert.notEqual((await upload()).wireBytes, corrupt.byteLength);
    await writeFile(sidecar, gzipSync(bytes.subarray(1), { level: 1 }));
    assert.equal((await upload()).encoding, "gzip");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("bootstrap: the script refuses a bad upload header, and stops at the end of input", async () => {
  const dir = await mkdtemp(join(tmpdir(), "exec-server-targets-"));
  try {
    const script = bootstrapScript({
      marker: "M",
      tag: "t",
      remoteDir: join(dir, "cache"),
      candidates: [{ sha256: "0".repeat(64), size: 5, dirName: "v-0" }],
    });
    const run = (input: string, path = "/usr/bin:/bin") => {
      const r = spawnSync("sh", ["-c", script], {
        input,
        encoding: "utf8",
        env: { PATH: path, HOME: dir },
        timeout: 20_000,
      });
      assert.equal(r.error, undefined, "the script ended by itself");
      return r.stdout.split("\n").filter((l) => l !== "").map((l) => l.replace(/^M /, ""));
    };
    const path = join(dir, "cache", "v-0", "exec-server");
    assert.deepEqual(run(""), ["upload 0 gzip " + path, "error header  "]);
    assert.deepEqual(run("zip 5\nhello"), ["upload 0 gzip " + path, "error header zip 5"]);
    assert.deepEqual(run("raw 5x\nhello"), ["upload 0 gzip " + path, "error header raw 5x"]);
    // A remote without gzip takes only raw.
    const bin = await toolDir(dir);
    assert.deepEqual(run("gzip 5\nhello", bin), ["upload 0 raw " + path, "error header gzip 5"]);
    // Short of bytes: what arrived is checked, and found wanting.
    assert.deepEqual(run("raw 5\nhel"), ["upload 0 gzip " + path, "received", "error verify 3"]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("bootstrap: the progress line is redrawn on a terminal, written twice elsewhere", () => {
  const [remotePath, target, wireBytes] = ["/r/exec-server", "linux-arm64", 3 << 20];
  const text = (verb: string, sent: string) =>
    `exec-server: ${verb} linux-arm64 binary to box: ${sent}/3.0 MiB (gzip, 8.0 MiB unpacked)`;
  for (const redraw of [true, false]) {
    let out = "";
    const line = new ProgressLine("box", { write: (t) => out += t, redraw });
    const upload = { remotePath, target, wireBytes, binaryBytes: 8 << 20, totalBytes: wireBytes };
    line.event({ kind: "upload", encoding: "gzip", ...upload });
    for (const sentBytes of [1 << 20, wireBytes]) {
      line.event({ kind: "progress", remotePath, sentBytes, totalBytes: wireBytes });
    }
    line.end();
    const lines = [["uploading", "0.0"], ["uploading", "1.0"], ["uploading", "3.0"]];
    const expected = redraw
      ? [...lines, ["uploaded", "3.0"]].map(([v, n]) => `\r${text(v, n)}\x1b[K`).join("") + "\n"
      : `${text("uploading", "0.0")}\n${text("uploaded", "3.0")}\n`;
    assert.equal(out, expected);
  }
});
