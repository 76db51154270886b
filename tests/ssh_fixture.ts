/**
 * A throwaway OpenSSH server on 127.0.0.1 for end-to-end tests: its own
 * host key, client key, authorized_keys and config in a temp dir, started
 * in the foreground and stopped with the test.
 *
 * @example
 * ```ts
 * import { startSshd, sshdMissingReason } from "./ssh_fixture.ts";
 * if (!sshdMissingReason()) {
 *   const sshd = await startSshd();
 *   // ssh [...sshd.sshArgs] sshd.destination some-command
 *   await sshd.stop();
 * }
 * ```
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { ROOT } from "./harness.ts";

/** Where Debian installs the daemon. */
export const SSHD = "/usr/sbin/sshd";

/** The Deno binary the project pins (run as `node_modules/deno/deno`). */
export const DENO_BIN: string = join(ROOT, "node_modules/deno/deno");

/** Why ssh tests cannot run here, or undefined when they can. */
export function sshdMissingReason(): string | undefined {
  const reason = missingReason();
  // CI installs openssh-server; there a missing sshd must fail the ssh
  // tests, not skip them.
  if (reason && process.env.CI) return undefined;
  return reason;
}

function missingReason(): string | undefined {
  if (!existsSync(SSHD)) {
    return `${SSHD} is missing: apt-get install -y openssh-server (.ci/run does this)`;
  }
  if (spawnSync("ssh", ["-V"]).error) {
    return "the ssh client is missing: apt-get install -y openssh-client";
  }
  if (spawnSync("ssh-keygen", ["-?"]).error) {
    return "ssh-keygen is missing: apt-get install -y openssh-client";
  }
  return undefined;
}

/** A running sshd and what a client needs to log in to it. */
export interface SshFixture {
  /** The temp dir holding keys, config and anything the test writes. */
  dir: string;
  /** The port sshd listens on (127.0.0.1). */
  port: number;
  /** `user@127.0.0.1` for the current user. */
  destination: string;
  /** The client's private key. */
  keyFile: string;
  /** `ssh` options that log in with the fixture's key, non-interactively. */
  sshArgs: string[];
  /** What sshd logged so far (it runs with `-e`: logs on stderr). */
  log(): string;
  /**
   * Write an executable script into `dir` and return its path. sshd runs
   * remote commands with a minimal environment, so scripts should use
   * absolute paths.
   */
  writeScript(name: string, body: string): string;
  /** Stop sshd and remove `dir`. */
  stop(): Promise<void>;
}

function keygen(path: string): void {
  const r = spawnSync("ssh-keygen", [
    "-q",
    "-t",
    "ed25519",
    "-N",
    "",
    "-C",
    "exec-server-test",
    "-f",
    path,
  ]);
  if (r.status !== 0) throw new Error(`ssh-keygen failed: ${r.stderr}`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Start sshd on a free port. Tries a few ports, since another process may
 * take the chosen one between choosing and binding.
 *
 * @throws {Error} with sshd's log when it does not come up
 */
export async function startSshd(): Promise<SshFixture> {
  const missing = sshdMissingReason();
  if (missing) throw new Error(missing);
  // Privilege separation needs this directory; the package creates it only at boot.
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const dir = mkdtempSync(join(tmpdir(), "exec-server-sshd-"));
  chmodSync(dir, 0o755);
  const hostKey = join(dir, "host_ed25519");
  const keyFile = join(dir, "client_ed25519");
  keygen(hostKey);
  keygen(keyFile);
  const authorized = join(dir, "authorized_keys");
  writeFileSync(authorized, readFileSync(`${keyFile}.pub`), { mode: 0o600 });
  let lastLog = "";
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const config = join(dir, "sshd_config");
    writeFileSync(
      config,
      [
        `Port ${port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${hostKey}`,
        `AuthorizedKeysFile ${authorized}`,
        `PidFile ${join(dir, "sshd.pid")}`,
        "StrictModes no",
        "UsePAM no",
        "PermitRootLogin yes",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "X11Forwarding no",
        "PrintMotd no",
        "LogLevel INFO",
        "",
      ].join("\n"),
    );
    const child = spawn(SSHD, ["-D", "-e", "-f", config], { stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (d: string) => log += d);
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const up = await waitFor(
      () => /Server listening on 127\.0\.0\.1 port/.test(log),
      exited,
      10_000,
    );
    if (up) return fixture(dir, port, keyFile, child, exited, () => log);
    lastLog = log;
    child.kill("SIGKILL");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`sshd did not start:\n${lastLog}`);
}

/** Poll `cond` until it holds (true), `exited` settles or `ms` pass (false). */
async function waitFor(cond: () => boolean, exited: Promise<void>, ms: number): Promise<boolean> {
  let gone = false;
  exited.then(() => gone = true);
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (cond()) return true;
    if (gone) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

function fixture(
  dir: string,
  port: number,
  keyFile: string,
  child: ChildProcess,
  exited: Promise<void>,
  log: () => string,
): SshFixture {
  return {
    dir,
    port,
    destination: `${userInfo().username}@127.0.0.1`,
    keyFile,
    sshArgs: [
      "-F",
      "/dev/null",
      "-i",
      keyFile,
      "-p",
      String(port),
      "-o",
      "IdentitiesOnly=yes",
      "-o",
      "StrictHostKeyChecking=no",
      "-o",
      "UserKnownHostsFile=/dev/null",
      "-o",
      "BatchMode=yes",
      "-o",
      "LogLevel=ERROR",
    ],
    log,
    writeScript(name: string, body: string): string {
      const path = join(dir, name);
      writeFileSync(path, body, { mode: 0o755 });
      return path;
    },
    async stop(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
