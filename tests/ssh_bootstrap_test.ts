/**
 * `connectSsh({bootstrap})`: uploading the server binary through the ssh
 * connection into a per-version cache, and reusing it.
 *
 * The end-to-end tests go through a real OpenSSH server on 127.0.0.1 (see
 * ssh_fixture.ts) with the real `dist/exec-server`. The others replace ssh
 * with a tiny local stand-in (`sshCommand`) that runs the remote command
 * under `/bin/sh -c` (dash on Debian) with an environment the test chooses,
 * so the cache-directory rules run for real under a POSIX shell that is not
 * bash.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import {
  chmod,
  chown,
  copyFile,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  BootstrapError,
  type BootstrapEvent,
  ExecServerClient,
  shellQuote,
  type SshBootstrapOptions,
} from "../mod.ts";
import {
  bootstrapRemoteCommand,
  bootstrapScript,
  detectBinaryPlatforms,
} from "../src/client/ssh_bootstrap.ts";
import { VERSION } from "../src/version.ts";
import { DIST_BINARY, ensureBinary } from "./binary_fixture.ts";
import { eventually, pidsByArgv0 } from "./harness.ts";
import { sshdMissingReason, startSshd } from "./ssh_fixture.ts";

// Skipped when sshd is missing; ssh_test.ts prints the one line that says why.
const sshdMissing = sshdMissingReason();

async function sha256Of(path: string): Promise<string> {
  return createHash("sha256").update(await readFile(path)).digest("hex");
}

function cachePath(root: string, sha256: string): string {
  return join(root, `${VERSION}-${sha256.slice(0, 16)}`, "exec-server");
}

/** A scratch directory; `dispose` unmounts what `mount` mounted and removes it. */
interface Scratch {
  dir: string;
  /**
   * Mount a tmpfs with `options` on a new directory `name` inside; false
   * where mounting is not allowed (not root, no CAP_SYS_ADMIN).
   */
  mount(name: string, options: string): Promise<string | undefined>;
  dispose(): Promise<void>;
}

async function scratch(): Promise<Scratch> {
  const dir = await mkdtemp(join(tmpdir(), "exec-server-bootstrap-"));
  const mounts: string[] = [];
  return {
    dir,
    async mount(name, options) {
      const at = join(dir, name);
      await mkdir(at);
      const r = spawnSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", at]);
      if (r.status !== 0) return undefined;
      mounts.push(at);
      return at;
    },
    async dispose() {
      for (const m of mounts) spawnSync("umount", ["-l", m]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const canMount = await (async () => {
  const s = await scratch();
  try {
    return await s.mount("probe", "size=64k") !== undefined;
  } finally {
    await s.dispose();
  }
})();
if (!canMount) console.error("ssh_bootstrap_test: tmpfs tests skipped: cannot mount here");

/**
 * A stand-in for `ssh` that runs the remote command locally, as sshd does
 * (`$SHELL -c command`), with only the given environment. It prints login
 * chatter first, which the client must skip.
 */
async function fakeSsh(
  dir: string,
  env: Record<string, string>,
  loginShell = "/bin/sh",
): Promise<string> {
  const path = join(dir, "fake-ssh");
  const assignments = Object.entries({ PATH: "/usr/bin:/bin", ...env })
    .map(([k, v]) => `${k}=${shellQuote(v)}`).join(" ");
  await writeFile(
    path,
    [
      "#!/bin/sh",
      "for last; do :; done",
      "echo 'Last login: today'; printf 'a motd without a newline '",
      `exec env -i ${assignments} ${loginShell} -c "$last"`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return path;
}

/** A small server "binary": a script that runs the real one. Padded to `size` bytes. */
async function standIn(dir: string, name: string, size = 0, body?: string): Promise<string> {
  await ensureBinary();
  const path = join(dir, name);
  let text = body ?? `#!/bin/sh\nexec ${DIST_BINARY} "$@"\n`;
  if (text.length < size) text += `#${"x".repeat(size - text.length - 2)}\n`;
  await writeFile(path, text, { mode: 0o755 });
  return path;
}

/** Connect through `sshCommand`, recording the bootstrap's events. */
async function connect(
  sshCommand: string,
  bootstrap: SshBootstrapOptions,
  more: { sshArgs?: string[]; destination?: string } = {},
): Promise<{ client: ExecServerClient; events: BootstrapEvent[] }> {
  const events: BootstrapEvent[] = [];
  const client = await ExecServerClient.connectSsh(more.destination ?? "me@fake-host", {
    sshCommand,
    sshArgs: more.sshArgs,
    serverArgs: ["--log-level", "warn"],
    initializeTimeoutMs: 30_000,
    closeTimeoutMs: 2000,
    bootstrap: { ...bootstrap, onProgress: (e) => events.push(e) },
  });
  return { client, events };
}

async function connectFails(
  sshCommand: string,
  bootstrap: SshBootstrapOptions,
): Promise<BootstrapError> {
  const err = await connect(sshCommand, bootstrap).then(
    async ({ client }) => {
      await client.close();
      assert.fail("connectSsh should have failed");
    },
    (e: unknown) => e,
  );
  assert.ok(err instanceof BootstrapError, `a BootstrapError, got ${err}`);
  return err;
}

function readyEvent(events: BootstrapEvent[]): { remotePath: string; uploaded: boolean } {
  const ready = events.find((e) => e.kind === "ready");
  assert.ok(ready?.kind === "ready", `a ready event in ${JSON.stringify(events)}`);
  return { remotePath: ready.remotePath, uploaded: ready.uploaded };
}

/** Files in `dir` left by an unfinished upload or probe. */
async function leftovers(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.startsWith("."));
}

function elfHeader(machine: number, osabi = 0): Uint8Array {
  const h = new Uint8Array(64);
  h.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, osabi]);
  new DataView(h.buffer).setUint16(18, machine, true);
  return h;
}

Deno.test("bootstrap: the platform is read from ELF and Mach-O headers", () => {
  assert.deepEqual(detectBinaryPlatforms(elfHeader(0x3e)), [{ os: "Linux", arch: "x86_64" }]);
  assert.deepEqual(detectBinaryPlatforms(elfHeader(0xb7)), [{ os: "Linux", arch: "aarch64" }]);
  assert.deepEqual(detectBinaryPlatforms(elfHeader(0x3e, 9)), [{ os: "FreeBSD", arch: "x86_64" }]);
  assert.equal(detectBinaryPlatforms(elfHeader(0x9999)), undefined);

  const macho = new Uint8Array(32);
  macho.set([0xcf, 0xfa, 0xed, 0xfe]);
  new DataView(macho.buffer).setUint32(4, 0x0100000c, true);
  assert.deepEqual(detectBinaryPlatforms(macho), [{ os: "Darwin", arch: "aarch64" }]);

  const fat = new Uint8Array(48);
  const view = new DataView(fat.buffer);
  view.setUint32(0, 0xcafebabe);
  view.setUint32(4, 2);
  view.setUint32(8, 0x01000007);
  view.setUint32(28, 0x0100000c);
  assert.deepEqual(detectBinaryPlatforms(fat), [
    { os: "Darwin", arch: "x86_64" },
    { os: "Darwin", arch: "aarch64" },
  ]);
  // A Java class file shares the magic; its "count" is a version number.
  view.setUint32(4, 52);
  assert.equal(detectBinaryPlatforms(fat), undefined);

  assert.equal(detectBinaryPlatforms(new TextEncoder().encode("#!/bin/sh\n")), "any");
  assert.equal(detectBinaryPlatforms(new TextEncoder().encode("plain text")), undefined);
  assert.equal(detectBinaryPlatforms(new Uint8Array(0)), undefined);
});

Deno.test("bootstrap: the script is POSIX sh, and the remote command is one plain line", () => {
  const candidate = { sha256: "0".repeat(64), size: 123, dirName: "0.1.0-0000000000000000" };
  const base = { marker: "exec-server-bootstrap:abc", tag: "t1", candidates: [candidate] };
  const variants = [
    bootstrapScript(base),
    bootstrapScript({
      ...base,
      remoteDir: "~/my cache",
      candidates: [{ ...candidate, platforms: [{ os: "Linux", arch: "arm" }] }],
    }),
    bootstrapScript({ ...base, remoteDir: "/opt/it's" }),
    bootstrapScript({
      ...base,
      candidates: [
        { ...candidate, platforms: [{ os: "Linux", arch: "aarch64" }] },
        { ...candidate, size: 7, platforms: [{ os: "Darwin", arch: "x86_64" }] },
      ],
    }),
  ];
  for (const script of variants) {
    for (const shell of [["dash", "-n"], ["bash", "--posix", "-n"]]) {
      const r = spawnSync(shell[0], [...shell.slice(1), "-c", script], { encoding: "utf8" });
      if (r.error) continue; // that shell is not installed
      assert.equal(r.status, 0, `${shell.join(" ")}: ${r.stderr}\n${script}`);
    }
    assert.doesNotMatch(script, /\[\[|\bfunction\b|\blocal\b|<<<|\$'/, "no bash-isms");
  }
  assert.match(variants[1], /pick "\$HOME"\/'my cache' shared/);
  assert.match(variants[1], /Linux\/arm\|Linux\/armv6l\|Linux\/armv7l\|Linux\/armv8l\)/);
  assert.doesNotMatch(variants[0], /uname/, "no platform check when the binary runs anywhere");
  assert.match(variants[3], /\nLinux\/aarch64\|Linux\/arm64\) i=0; .* size=123; /);
  assert.match(variants[3], /\nDarwin\/x86_64\|Darwin\/amd64\) i=1; .* size=7; /);
  assert.match(variants[3], /\n\*\) say error platform "\$os\/\$arch"; exit 90 ;;\nesac\n/);
  assert.throws(() => bootstrapScript({ ...base, remoteDir: "relative/dir" }), TypeError);

  const command = bootstrapRemoteCommand(4321);
  assert.equal(command, `exec sh -c 'eval "$(head -c 4321)"' exec-server-bootstrap`);
  assert.doesNotMatch(command, /\n|\\/, "safe for any login shell");
});

Deno.test("bootstrap: the default cache is ~/.cache, or $XDG_CACHE_HOME, or $TMPDIR/exec-server-<uid>", async () => {
  const s = await scratch();
  try {
    const binary = await standIn(s.dir, "server");
    const sha = await sha256Of(binary);
    const uid = String(process.getuid!());
    const cases: [string, Record<string, string>, string][] = [
      ["home", { HOME: `${s.dir}/home` }, `${s.dir}/home/.cache/exec-server`],
      [
        "xdg",
        { HOME: `${s.dir}/home2`, XDG_CACHE_HOME: `${s.dir}/xdg` },
        `${s.dir}/xdg/exec-server`,
      ],
      // A relative XDG_CACHE_HOME is invalid by the spec and ignored.
      [
        "xdg-relative",
        { HOME: `${s.dir}/home3`, XDG_CACHE_HOME: "rel" },
        `${s.dir}/home3/.cache/exec-server`,
      ],
      // A HOME under a regular file cannot hold a cache, even for root.
      [
        "no-home",
        { HOME: "/dev/null/home", TMPDIR: `${s.dir}/tmp/` },
        `${s.dir}/tmp/exec-server-${uid}`,
      ],
      ["unset-home", { TMPDIR: `${s.dir}/tmp2` }, `${s.dir}/tmp2/exec-server-${uid}`],
    ];
    for (const [name, env, root] of cases) {
      const ssh = await fakeSsh(s.dir, env);
      const { client, events } = await connect(ssh, { localBinary: binary });
      try {
        assert.deepEqual(
          readyEvent(events),
          { remotePath: cachePath(root, sha), uploaded: true },
          name,
        );
        assert.equal((await client.run(["echo", name])).stdout, `${name}\n`);
      } finally {
        await client.close();
      }
      assert.equal(await sha256Of(cachePath(root, sha)), sha, name);
      assert.equal((await stat(root)).mode & 0o777, 0o700, `${name}: the cache root is private`);
      assert.deepEqual(await leftovers(join(root, `${VERSION}-${sha.slice(0, 16)}`)), [], name);
    }
  } finally {
    await s.dispose();
  }
});

Deno.test("bootstrap: a cache directory that is a symlink or not ours is refused, never run from", async () => {
  const s = await scratch();
  try {
    // The server notes the path it runs from, so a run from a planted copy shows.
    const ran = join(s.dir, "ran-from");
    const binary = await standIn(
      s.dir,
      "server",
      0,
      `#!/bin/sh\necho "$0" >> ${ran}\nexec ${DIST_BINARY} "$@"\n`,
    );
    const sha = await sha256Of(binary);
    const name = `${VERSION}-${sha.slice(0, 16)}`;
    const uid = process.getuid!();
    // Another user's files need root to make; without root the symlink cases still run.
    const other = uid === 0 ? 65534 : undefined;
    let n = 0;

    /**
     * An "attacker's" directory holding a valid copy of the binary, as a
     * cache would: the old script took it as cached and executed it.
     */
    const planted = async (owner = other): Promise<string> => {
      const dir = join(s.dir, `attacker-${++n}`);
      await mkdir(join(dir, name), { recursive: true, mode: 0o755 });
      await chmod(dir, 0o755);
      await copyFile(binary, join(dir, name, "exec-server"));
      await chmod(join(dir, name, "exec-server"), 0o755);
      if (owner !== undefined) {
        for (const p of [dir, join(dir, name), join(dir, name, "exec-server")]) {
          await chown(p, owner, owner);
        }
      }
      return dir;
    };
    /** A fresh shared temp dir (mode 1777, like /tmp), and the fallback root's path in it. */
    const sharedTmp = async (): Promise<{ tmp: string; root: string }> => {
      const tmp = join(s.dir, `tmp-${++n}`);
      await mkdir(tmp);
      await chmod(tmp, 0o1777);
      return { tmp, root: join(tmp, `exec-server-${uid}`) };
    };
    const refused = async (env: Record<string, string>, path: string, what: string) => {
      const err = await connectFails(await fakeSsh(s.dir, env), { localBinary: binary });
      assert.equal(err.kind, "directory", `${what}: ${err.message}`);
      assert.ok(err.message.includes(`${path}: `), `${what}: names ${path}: ${err.message}`);
      assert.equal(
        existsSync(ran),
        false,
        `${what}: nothing ran (${existsSync(ran) && await readFile(ran, "utf8")})`,
      );
    };
    const noHome = { HOME: "/dev/null/home" };

    if (other !== undefined) {
      // The fallback root made in advance by another user (the reviewer's attack).
      const { tmp, root } = await sharedTmp();
      const attacker = await planted();
      await rename(attacker, root);
      await refused({ ...noHome, TMPDIR: tmp }, root, "root owned by another user");
      assert.equal(
        (await stat(root)).mode & 0o777,
        0o755,
        "another user's directory is not chmodded",
      );
      assert.equal((await stat(root)).uid, other);

      // Our root, but another user's per-binary directory in it.
      const { tmp: tmp2, root: root2 } = await sharedTmp();
      await mkdir(root2, { mode: 0o700 });
      await rename(join(await planted(), name), join(root2, name));
      await refused(
        { ...noHome, TMPDIR: tmp2 },
        join(root2, name),
        "per-binary dir of another user",
      );
    }

    // The fallback root as a symlink to a directory with a planted copy.
    const { tmp: tmp3, root: root3 } = await sharedTmp();
    await symlink(await planted(), root3);
    await refused({ ...noHome, TMPDIR: tmp3 }, root3, "root is a symlink");

    // Even a symlink to a directory of our own: whoever made the link can re-point it.
    const { tmp: tmp4, root: root4 } = await sharedTmp();
    await symlink(await planted(undefined), root4);
    await refused({ ...noHome, TMPDIR: tmp4 }, root4, "root is a symlink to our own dir");

    // The per-binary directory as a symlink, in an explicit remoteDir.
    const remoteDir = join(s.dir, "explicit");
    await mkdir(remoteDir);
    await symlink(join(await planted(), name), join(remoteDir, name));
    const err = await connectFails(await fakeSsh(s.dir, { HOME: `${s.dir}/home` }), {
      localBinary: binary,
      remoteDir,
    });
    assert.equal(err.kind, "directory", err.message);
    assert.ok(err.message.includes(`${join(remoteDir, name)}: `), err.message);
    assert.equal(existsSync(ran), false, "nothing ran from the symlinked per-binary dir");

    // A refused ~/.cache root is skipped for the next candidate, the private fallback.
    const home = join(s.dir, "home-linked");
    await mkdir(join(home, ".cache"), { recursive: true });
    await symlink(await planted(), join(home, ".cache", "exec-server"));
    const { tmp: tmp5, root: root5 } = await sharedTmp();
    const { client, events } = await connect(await fakeSsh(s.dir, { HOME: home, TMPDIR: tmp5 }), {
      localBinary: binary,
    });
    await client.close();
    assert.deepEqual(readyEvent(events), { remotePath: cachePath(root5, sha), uploaded: true });
    assert.equal((await readFile(ran, "utf8")).trim(), cachePath(root5, sha), "ran the upload");
    assert.equal((await stat(root5)).mode & 0o777, 0o700);
    assert.equal((await stat(join(root5, name))).mode & 0o777, 0o700);
  } finally {
    await s.dispose();
  }
});

Deno.test("bootstrap: timeoutMs starts once the remote has received the whole upload", async () => {
  const s = await scratch();
  try {
    // Small enough to sit whole in the pipe to "ssh": the client is done
    // writing at once, while the remote is slow to take it, like the tail
    // of an upload over a slow link.
    const binary = await standIn(s.dir, "server", 20_000);
    const realHead = spawnSync("sh", ["-c", "command -v head"], { encoding: "utf8" }).stdout.trim();
    const slow = join(s.dir, "slow-bin");
    await mkdir(slow);
    // The first head reads the script, the second the (compressed) upload:
    // that one is slow to start.
    const seen = join(s.dir, "head-seen");
    await writeFile(
      join(slow, "head"),
      `#!/bin/sh\nif [ -e ${seen} ]; then sleep 3; else : > ${seen}; fi\nexec ${realHead} "$@"\n`,
      { mode: 0o755 },
    );
    const ssh = await fakeSsh(s.dir, { HOME: `${s.dir}/home`, PATH: `${slow}:/usr/bin:/bin` });
    const started = Date.now();
    const { client, events } = await connect(ssh, { localBinary: binary, timeoutMs: 1500 });
    await client.close();
    assert.ok(Date.now() - started >= 3000, "the remote took its time");
    assert.equal(readyEvent(events).uploaded, true);

    // What follows the upload is still timed: here, a hung checksum.
    const hung = join(s.dir, "hung-bin");
    await mkdir(hung);
    // Short: the stand-in ssh (a sh with a trap set) exits only once it ends.
    await writeFile(join(hung, "sha256sum"), "#!/bin/sh\nexec sleep 4\n", { mode: 0o755 });
    const ssh2 = await fakeSsh(s.dir, { HOME: `${s.dir}/home2`, PATH: `${hung}:/usr/bin:/bin` });
    const err = await connectFails(ssh2, { localBinary: binary, timeoutMs: 1000 });
    assert.equal(err.kind, "timeout", err.message);
    assert.match(err.message, /waited 1000 ms for the remote's check of the upload/);
  } finally {
    await s.dispose();
  }
});

Deno.test("bootstrap: a wrong platform fails before anything is uploaded", async () => {
  const s = await scratch();
  try {
    const foreign = join(s.dir, "exec-server-arm64");
    const bytes = new Uint8Array(100_000);
    bytes.set(elfHeader(0xb7));
    await writeFile(foreign, bytes, { mode: 0o755 });
    const ssh = await fakeSsh(s.dir, { HOME: `${s.dir}/home` });
    const err = await connectFails(ssh, { localBinary: foreign });
    assert.equal(err.kind, "platform");
    assert.equal(err.host, "me@fake-host");
    const machine = spawnSync("uname", ["-m"], { encoding: "utf8" }).stdout.trim();
    assert.equal(err.remotePlatform, `Linux/${machine}`);
    assert.match(err.message, /me@fake-host/);
    assert.match(err.message, /built for Linux\/aarch64/);
    assert.equal(existsSync(`${s.dir}/home/.cache`), false, "nothing was created remotely");

    // An explicit platform overrides the header: here it matches, so the
    // upload happens (and the file, not a real server, fails to start).
    const err2 = await connectFails(ssh, {
      localBinary: foreign,
      platform: { os: "Linux", arch: machine },
    });
    assert.equal(err2.kind, "start");
    assert.match(err2.remotePath!, /^.*\/home\/\.cache\/exec-server\/.*\/exec-server$/);
  } finally {
    await s.dispose();
  }
});

Deno.test("bootstrap: concurrent first connections share one intact cached file", async () => {
  const s = await scratch();
  try {
    const binary = await standIn(s.dir, "server", 300_000);
    const sha = await sha256Of(binary);
    // bash as the login shell this time (it only parses the one-line command).
    const ssh = await fakeSsh(s.dir, { HOME: `${s.dir}/home` }, "/bin/bash");
    const results = await Promise.all([1, 2, 3].map(() => connect(ssh, { localBinary: binary })));
    try {
      for (const { client } of results) {
        assert.equal((await client.run(["true"])).exitCode, 0);
      }
    } finally {
      await Promise.all(results.map(({ client }) => client.close()));
    }
    const path = cachePath(`${s.dir}/home/.cache/exec-server`, sha);
    assert.equal(await sha256Of(path), sha);
    assert.deepEqual(await leftovers(join(path, "..")), [], "no temp or probe files remain");
  } finally {
    await s.dispose();
  }
});

Deno.test("bootstrap: failures are BootstrapErrors that say what happened", async () => {
  const s = await scratch();
  try {
    const ssh = await fakeSsh(s.dir, { HOME: `${s.dir}/home` });

    const missing = await connectFails(ssh, { localBinary: `${s.dir}/nope` });
    assert.equal(missing.kind, "local");
    assert.match(missing.message, /nope/);

    const text = join(s.dir, "notes.txt");
    await writeFile(text, "not a program");
    const unknown = await connectFails(ssh, { localBinary: text });
    assert.equal(unknown.kind, "local");
    assert.match(unknown.message, /bootstrap\.platform/);

    const broken = await standIn(s.dir, "broken", 0, "#!/bin/sh\necho broken-server >&2\nexit 3\n");
    const start = await connectFails(ssh, { localBinary: broken });
    assert.equal(start.kind, "start");
    assert.match(start.message, /broken-server/);
    assert.match(start.message, /\/home\/\.cache\/exec-server\//);

    const denied = join(s.dir, "denied-ssh");
    await writeFile(denied, "#!/bin/sh\necho 'Permission denied (publickey).' >&2\nexit 255\n", {
      mode: 0o755,
    });
    const exited = await connectFails(denied, { localBinary: broken });
    assert.equal(exited.kind, "exited");
    assert.match(exited.message, /Permission denied \(publickey\)/);

    const hang = join(s.dir, "hang-ssh");
    await writeFile(hang, "#!/bin/sh\nexec sleep 30\n", { mode: 0o755 });
    const started = Date.now();
    const timeout = await connectFails(hang, { localBinary: broken, timeoutMs: 300 });
    assert.equal(timeout.kind, "timeout");
    assert.ok(Date.now() - started < 10_000, "the hung ssh was stopped");

    await assert.rejects(
      ExecServerClient.connectSsh("me@fake-host", {
        sshCommand: ssh,
        binary: "exec-server",
        bootstrap: { localBinary: broken },
      }),
      TypeError,
    );
    await assert.rejects(
      connect(ssh, { localBinary: broken, remoteDir: "relative" }),
      /remoteDir must be absolute/,
    );
  } finally {
    await s.dispose();
  }
});

Deno.test("bootstrap: without a sha256 tool, the size is what is checked", async () => {
  const s = await scratch();
  try {
    // A PATH with what the script needs, minus sha256sum, shasum and openssl.
    const bin = join(s.dir, "bin");
    await mkdir(bin);
    for (const tool of ["sh", "head", "mkdir", "chmod", "rm", "wc", "mv", "id", "uname", "ls"]) {
      const where = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout;
      await symlink(where.trim(), join(bin, tool));
    }
    const binary = await standIn(s.dir, "server", 50_000);
    const sha = await sha256Of(binary);
    const ssh = await fakeSsh(s.dir, { HOME: `${s.dir}/home`, PATH: bin });
    const path = cachePath(`${s.dir}/home/.cache/exec-server`, sha);
    const session = async (): Promise<boolean> => {
      const { client, events } = await connect(ssh, { localBinary: binary });
      await client.close();
      return readyEvent(events).uploaded;
    };
    assert.equal(await session(), true);
    assert.equal(await session(), false);
    // Same size, other bytes: undetectable without a hash (the documented limit).
    await writeFile(path, (await readFile(path)).fill(0x23, 40_000), { mode: 0o700 });
    assert.equal(await session(), false);
    await writeFile(path, "#!/bin/sh\nexit 1\n", { mode: 0o700 });
    assert.equal(await session(), true, "another size is replaced");
    assert.equal(await sha256Of(path), sha);
  } finally {
    await s.dispose();
  }
});

Deno.test({
  name: "bootstrap: noexec and full filesystems are detected",
  ignore: !canMount,
  async fn() {
    const s = await scratch();
    try {
      const noexec = await s.mount("noexec", "noexec,size=4m");
      const full = await s.mount("full", "size=64k");
      assert.ok(noexec && full, "tmpfs mounted");
      const binary = await standIn(s.dir, "server", 200_000);
      const sha = await sha256Of(binary);

      // An explicit remoteDir on a noexec mount: no fallback, a clear error.
      const ssh = await fakeSsh(s.dir, { HOME: `${s.dir}/home` });
      const err = await connectFails(ssh, { localBinary: binary, remoteDir: noexec });
      assert.equal(err.kind, "directory");
      assert.match(err.message, /cannot be executed \(mounted noexec\?\)/);
      assert.match(err.message, new RegExp(noexec));

      // A noexec HOME: the default falls back to $TMPDIR.
      const ssh2 = await fakeSsh(s.dir, { HOME: noexec, TMPDIR: `${s.dir}/tmp` });
      const { client, events } = await connect(ssh2, { localBinary: binary });
      await client.close();
      const uid = String(process.getuid!());
      assert.equal(
        readyEvent(events).remotePath,
        cachePath(`${s.dir}/tmp/exec-server-${uid}`, sha),
      );

      // No space: the write fails, the error quotes the remote's complaint,
      // and no partial file stays behind.
      const nospace = await connectFails(ssh, { localBinary: binary, remoteDir: full });
      assert.equal(nospace.kind, "write");
      assert.match(nospace.message, /No space left on device/);
      assert.equal(nospace.remotePath, cachePath(full, sha));
      assert.deepEqual(await leftovers(join(full, `${VERSION}-${sha.slice(0, 16)}`)), []);
    } finally {
      await s.dispose();
    }
  },
});

Deno.test({
  name: "bootstrap over ssh: upload once, reuse, replace a corrupted copy, leave no server behind",
  ignore: sshdMissing !== undefined,
  async fn() {
    await ensureBinary();
    const sshd = await startSshd();
    try {
      // A private copy: a rebuild of dist/ during the test must not change it.
      const binary = join(sshd.dir, "exec-server-local");
      await copyFile(DIST_BINARY, binary);
      await chmod(binary, 0o755);
      const sha = await sha256Of(binary);
      const remoteDir = join(sshd.dir, "remote-cache");
      const remotePath = cachePath(remoteDir, sha);
      assert.equal(existsSync(remoteDir), false);
      const bootstrap = { localBinary: binary, remoteDir };
      const ssh = { sshArgs: sshd.sshArgs, destination: sshd.destination };

      /** Connect, run a command, close, and check that the server is gone. */
      const session = async (): Promise<BootstrapEvent[]> => {
        const { client, events } = await connect("ssh", bootstrap, ssh);
        try {
          const r = await client.run(["sh", "-c", "echo remote $PPID"]);
          assert.equal(r.exitCode, 0);
          const servers = await pidsByArgv0(remotePath);
          assert.equal(servers.length, 1, `one server runs from the cache (${servers})`);
          assert.equal(r.stdout, `remote ${servers[0]}\n`);
        } finally {
          await client.close();
        }
        await eventually(
          async () => (await pidsByArgv0(remotePath)).length === 0,
          10_000,
          "the remote server to exit",
        );
        return events;
      };

      // (1) Nothing cached: the binary is uploaded, verified and run.
      const first = await session();
      const wireBytes = first[0].kind === "upload" ? first[0].wireBytes : -1;
      assert.deepEqual(first[0], {
        kind: "upload",
        remotePath,
        target: process.arch === "arm64" ? "linux-arm64" : "linux-x64",
        encoding: "gzip",
        wireBytes,
        binaryBytes: (await stat(binary)).size,
        totalBytes: wireBytes,
      });
      assert.ok(first.some((e) => e.kind === "progress"));
      assert.deepEqual(readyEvent(first), { remotePath, uploaded: true });
      const cached = await stat(remotePath);
      assert.equal(cached.mode & 0o777, 0o700);
      assert.equal(await sha256Of(remotePath), sha);

      // (2) Cached: no upload, the very same file.
      const second = await session();
      assert.deepEqual(second.map((e) => e.kind), ["ready"]);
      assert.deepEqual(readyEvent(second), { remotePath, uploaded: false });
      const again = await stat(remotePath);
      assert.equal(again.ino, cached.ino);
      assert.equal(again.mtimeMs, cached.mtimeMs);

      // (3) Damaged in place (same size, other bytes): replaced by a fresh upload.
      const file = await open(remotePath, "r+");
      await file.write(new Uint8Array(4096).fill(0x55), 0, 4096, 1_000_000);
      await file.close();
      assert.notEqual(await sha256Of(remotePath), sha);
      const third = await session();
      assert.deepEqual(readyEvent(third), { remotePath, uploaded: true });
      assert.equal(await sha256Of(remotePath), sha);
      assert.notEqual(
        (await stat(remotePath)).ino,
        cached.ino,
        "renamed into place, not rewritten",
      );
      assert.deepEqual(await leftovers(join(remotePath, "..")), []);
    } catch (err) {
      console.error(`sshd log:\n${sshd.log()}`);
      throw err;
    } finally {
      await sshd.stop();
    }
  },
});
