/**
 * Sessions that other servers can reach stay their user's own: another uid
 * (a real one, 65534, through `setpriv`) can neither connect to a session's
 * socket nor resume it through a server of its own; a connection to the
 * socket that lacks the directory's secret, or comes from another version,
 * or does not begin with a link hello, is refused; a resume needs the
 * session's id, and a fresh session sees nothing of another's; and on a
 * websocket server the token guards resumes as it guards everything.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, chown, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import process from "node:process";
import { VERSION } from "../src/version.ts";
import { CodexWs, startTokenServer } from "./codex_cli_fixture.ts";
import { eventually, type Msg, serverCommand, startParams, TestServer } from "./harness.ts";
import { killAll, pidsMentioning, sessionDir } from "./session_fixture.ts";

const NOBODY = 65534;
const SETPRIV = ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--"];

/** Whether `name` is an executable on PATH. */
function onPath(name: string): boolean {
  return (process.env.PATH ?? "").split(delimiter).some((d) => d && existsSync(join(d, name)));
}

/** Why the tests that need a second uid cannot run here, or undefined. */
function secondUidMissing(): string | undefined {
  if (process.getuid?.() !== 0) return "they need root, to run commands as uid 65534";
  if (!onPath("setpriv")) return "setpriv is missing";
  if (!onPath("node")) return "node is missing";
  return undefined;
}

const missing = secondUidMissing();

/** The socket name of session `id`: `s-` and the first 16 bytes of its SHA-256, in hex. */
function socketName(id: string): string {
  return `s-${createHash("sha256").update(id).digest("hex").slice(0, 32)}.sock`;
}

/** `sleep 30` under `marker` as its argv[0]. */
const sleeper = (marker: string) => ["bash", "-c", `exec -a ${marker} sleep 30`];

/** A lingering server holding a v0 session with a running process. */
interface Held {
  server: TestServer;
  id: string;
  socket: string;
  marker: string;
}

/** Open a v0 session in `dir` on a server, start `sleep 30` in it, then close its stdin. */
async function holdSession(dir: string): Promise<Held> {
  const marker = `security-marker-${crypto.randomUUID()}`;
  const server = new TestServer(["--session-dir", dir, "--log-level", "info"]);
  const init = await server.call("initialize", { clientName: "holder", session: {} });
  assert.equal(init.session.resumed, false);
  assert.equal(init.session.fromOtherServers, true);
  server.notify("initialized", {});
  await server.call("process/start", startParams("p", sleeper(marker)));
  await eventually(async () => (await pidsMentioning(marker)).length > 0, 10_000, "the process");
  const socket = join(dir, socketName(init.session.id));
  await eventually(() => existsSync(socket), 10_000, "the session's socket");
  server.child.stdin!.end();
  await eventually(() => server.stderr.includes("keeping 1 session(s)"), 10_000, "the linger");
  return { server, id: init.session.id, socket, marker };
}

/** A home (and DENO_DIR, TMPDIR) owned by uid 65534, and its removal. */
async function nobodyHome(): Promise<[Record<string, string>, () => Promise<void>]> {
  const home = await mkdtemp(join(tmpdir(), "es-nobody-"));
  await chown(home, NOBODY, NOBODY);
  const env = { HOME: home, DENO_DIR: join(home, "deno"), TMPDIR: home, XDG_RUNTIME_DIR: "" };
  return [env, () => rm(home, { recursive: true, force: true })];
}

/** A server run as uid 65534. */
function nobodyServer(args: string[], env: Record<string, string>): TestServer {
  return new TestServer(args, { command: [...SETPRIV, ...serverCommand()], env });
}

/** The real uid of process `pid`. */
async function uidOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
}

/** What uid 65534 gets (an error code, or "ok") listing `dir`, reading its secret, connecting. */
function probeAsNobody(dir: string, socket: string): Promise<Msg> {
  const script = `
    const fs = require("node:fs");
    const [dir, socket] = process.argv.slice(1);
    const code = (f) => { try { f(); return "ok"; } catch (e) { return e.code; } };
    const out = { list: code(() => fs.readdirSync(dir)), secret: code(() => fs.readFileSync(dir + "/secret")) };
    const done = (what) => { out.connect = what; console.log(JSON.stringify(out)); process.exit(0); };
    require("node:net").createConnection(socket)
      .on("connect", () => done("connected")).on("error", (e) => done(e.code));`;
  const [cmd, ...args] = [...SETPRIV, "node", "-e", script, dir, socket];
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err}\n${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

Deno.test({
  name: "session security: another uid can neither reach the socket nor resume the session",
  ignore: missing !== undefined && !process.env.CI,
  sanitizeResources: false,
  fn: async () => {
    if (missing) throw new Error(`cannot test with a second uid: ${missing}`);
    const [dir, removeDir] = await sessionDir();
    const [env, removeHome] = await nobodyHome();
    let held: Held | undefined;
    try {
      held = await holdSession(dir);
      assert.equal((await stat(dir)).mode & 0o777, 0o700);
      assert.equal((await stat(held.socket)).mode & 0o777, 0o600);
      assert.ok((await stat(held.socket)).isSocket());
      assert.equal((await stat(join(dir, "secret"))).mode & 0o777, 0o600);

      // (a) The directory keeps uid 65534 out, and were it open, the socket's own mode would.
      const shut = { list: "EACCES", secret: "EACCES", connect: "EACCES" };
      assert.deepEqual(await probeAsNobody(dir, held.socket), shut);
      await chmod(dir, 0o711);
      try {
        assert.deepEqual(await probeAsNobody(dir, held.socket), shut);
      } finally {
        await chmod(dir, 0o700);
      }

      // (b) Its own server, pointed at the directory, cannot resume the session.
      {
        await using s = nobodyServer(["--session-dir", dir], env);
        const resume = await s.request("initialize", {
          clientName: "x",
          session: { resume: held.id },
        });
        assert.equal(await uidOf(s.child.pid!), NOBODY);
        assert.equal(resume.error?.code, -32600, JSON.stringify(resume));
        assert.match(resume.error.message, new RegExp(`unknown session id ${held.id}`));
        s.notify("initialized", {});
        const list = await s.request("process/list", {});
        assert.match(list.error?.message ?? "", /call initialize first/, JSON.stringify(list));
        // Nor may it use root's directory for sessions of its own.
        const fresh = await s.call("initialize", { clientName: "x", session: {} });
        assert.notEqual(fresh.session.id, held.id);
        await eventually(
          () => /cannot be reached from other servers: .*belongs to uid 0/.test(s.stderr),
          10_000,
          "the warning about root's directory",
        );
        s.kill(); // It holds a session now: closing would linger.
      }

      // (c) With its default session directory, the id is unknown.
      {
        await using s = nobodyServer([], env);
        const answer = await s.request("initialize", {
          clientName: "x",
          session: { resume: held.id },
        });
        assert.equal(await uidOf(s.child.pid!), NOBODY);
        assert.equal(answer.error?.code, -32600, JSON.stringify(answer));
        assert.match(answer.error.message, /unknown session id/);
      }

      // Through all of this the session was left alone.
      assert.equal((await pidsMentioning(held.marker)).length, 1);
      assert.ok((await pidsMentioning(dir)).includes(held.server.child.pid!));
    } finally {
      held?.server.kill();
      await killAll(dir, ...(held ? [held.marker] : []));
      await removeHome();
      await removeDir();
    }
  },
});

/** A raw connection to a session socket, read line by line. */
class RawLink {
  readonly lines: Msg[] = [];
  closed = false;
  #buf = "";
  #socket: net.Socket;

  private constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => {
      this.#buf += d;
      let nl;
      while ((nl = this.#buf.indexOf("\n")) >= 0) {
        this.lines.push(JSON.parse(this.#buf.slice(0, nl)));
        this.#buf = this.#buf.slice(nl + 1);
      }
    });
    socket.on("close", () => this.closed = true);
    socket.on("error", () => {});
  }

  /** Connect to `path`. */
  static open(path: string): Promise<RawLink> {
    return new Promise((resolve, reject) => {
      const socket = net.createConnection(path);
      socket.once("error", reject);
      socket.once("connect", () => {
        socket.off("error", reject);
        resolve(new RawLink(socket));
      });
    });
  }

  /** Send `msg` as one line. */
  send(msg: Msg): void {
    this.#socket.write(JSON.stringify(msg) + "\n");
  }

  /** Line `n` (from 0), once it arrived. */
  async line(n: number): Promise<Msg> {
    await eventually(() => this.lines.length > n || this.closed, 10_000, `link line ${n}`);
    assert.ok(this.lines.length > n, `the link closed after ${JSON.stringify(this.lines)}`);
    return this.lines[n];
  }

  /** Drop the connection. */
  destroy(): void {
    this.#socket.destroy();
  }
}

/** Open a link, send `first`, and return the answer once the holder closed the link. */
async function refusedLink(socket: string, first: Msg): Promise<string> {
  const link = await RawLink.open(socket);
  try {
    link.send(first);
    const answer = await link.line(0);
    assert.equal(answer.execServerLink?.ok, undefined, JSON.stringify(answer));
    assert.equal(typeof answer.execServerLink?.error, "string", JSON.stringify(answer));
    await eventually(() => link.closed, 10_000, "the holder to close a refused link");
    assert.equal(link.lines.length, 1, JSON.stringify(link.lines));
    return answer.execServerLink.error;
  } finally {
    link.destroy();
  }
}

Deno.test({
  name: "session security: a link without the secret, of another version or no hello is refused",
  sanitizeResources: false,
  fn: async () => {
    const [dir, removeDir] = await sessionDir();
    let held: Held | undefined;
    try {
      held = await holdSession(dir);
      const secret = (await readFile(join(dir, "secret"), "utf8")).trim();
      assert.match(secret, /^[0-9a-f]{64}$/);
      const zeros = "0".repeat(64);

      const noSecret = await refusedLink(held.socket, {
        execServerLink: { version: VERSION, secret: zeros },
      });
      assert.match(noSecret, /secret/);
      // Without the secret, nothing about the holder's version is told either.
      const neither = await refusedLink(held.socket, {
        execServerLink: { version: "0.0.0-other", secret: zeros },
      });
      assert.match(neither, /secret/);
      assert.ok(!neither.includes(VERSION), neither);
      const otherVersion = await refusedLink(held.socket, {
        execServerLink: { version: "0.0.0-other", secret },
      });
      assert.ok(
        otherVersion.includes(VERSION) && otherVersion.includes("0.0.0-other"),
        otherVersion,
      );
      const noHello = await refusedLink(held.socket, {
        id: 1,
        method: "initialize",
        params: { clientName: "x", session: { resume: held.id } },
      });
      assert.match(noHello, /hello/);

      // The right hello is let in, and the session (left alone so far) is served.
      const link = await RawLink.open(held.socket);
      try {
        link.send({ execServerLink: { version: VERSION, secret } });
        assert.deepEqual(await link.line(0), { execServerLink: { ok: true } });
        link.send({
          id: 1,
          method: "initialize",
          params: { clientName: "x", session: { resume: held.id } },
        });
        assert.equal((await link.line(1)).result?.session?.resumed, true);
        link.send({ method: "initialized", params: {} });
        link.send({ id: 2, method: "process/list", params: {} });
        const listed = (await link.line(2)).result.processes.map((p: Msg) => p.processId);
        assert.deepEqual(listed, ["p"]);
      } finally {
        link.destroy();
      }
    } finally {
      held?.server.kill();
      await killAll(dir, ...(held ? [held.marker] : []));
      await removeDir();
    }
  },
});

Deno.test({
  name: "session security: a resume needs the session's id; a fresh session sees no other's",
  sanitizeResources: false,
  fn: async () => {
    const [dir, removeDir] = await sessionDir();
    let held: Held | undefined;
    try {
      held = await holdSession(dir);
      const args = ["--session-dir", dir];
      {
        await using guess = new TestServer(args);
        const id = crypto.randomUUID();
        const answer = await guess.request("initialize", {
          clientName: "x",
          session: { resume: id },
        });
        assert.equal(answer.error?.code, -32600, JSON.stringify(answer));
        assert.match(answer.error.message, new RegExp(`unknown session id ${id}`));
      }
      {
        const fresh = new TestServer(args);
        try {
          const init = await fresh.call("initialize", { clientName: "x", session: {} });
          assert.equal(init.session.resumed, false);
          assert.notEqual(init.session.id, held.id);
          fresh.notify("initialized", {});
          assert.deepEqual((await fresh.call("process/list", {})).processes, []);
          // Nor is the other session's process reached by its processId.
          for (const method of ["process/read", "process/write"]) {
            const answer = await fresh.request(method, { processId: "p", chunk: "", afterSeq: 0 });
            assert.ok(answer.error, `${method}: ${JSON.stringify(answer)}`);
          }
          // Terminating an unknown process is no error, and finds nothing running.
          const stopped = await fresh.call("process/terminate", { processId: "p" });
          assert.equal(stopped.running, false);
        } finally {
          fresh.kill(); // It holds a session: closing would linger.
        }
      }
      assert.equal((await pidsMentioning(held.marker)).length, 1, "the process was touched");
      // With the id, the session is resumed through the directory.
      await using again = new TestServer(args);
      const init = await again.call("initialize", {
        clientName: "x",
        session: { resume: held.id },
      });
      assert.equal(init.session.resumed, true);
      again.notify("initialized", {});
      const listed = (await again.call("process/list", {})).processes.map((p: Msg) => p.processId);
      assert.deepEqual(listed, ["p"]);
    } finally {
      held?.server.kill();
      await killAll(dir, ...(held ? [held.marker] : []));
      await removeDir();
    }
  },
});

const TOKEN = "session-security-token-0123456789abcdef";

/** Connect with the token and resume `id` (v0), retrying while the old connection detaches. */
async function resumeOnWs(url: string, id: string): Promise<[CodexWs, Msg]> {
  let found: [CodexWs, Msg] | undefined;
  await eventually(
    async () => {
      const c = await CodexWs.open(url, TOKEN);
      const answer = await c.request("initialize", { clientName: "x", session: { resume: id } });
      if (answer.result) found = [c, answer.result];
      else c.drop();
      return found !== undefined;
    },
    10_000,
    "the resume to be accepted",
  );
  return found!;
}

Deno.test({
  name: "session security: on a websocket server, no token, no resume; with it, resumed",
  sanitizeResources: false,
  fn: async () => {
    const [dir, removeDir] = await sessionDir();
    const marker = `security-ws-${crypto.randomUUID()}`;
    const [server, stop] = await startTokenServer(TOKEN, ["--session-dir", dir]);
    try {
      const a = await CodexWs.open(server.url, TOKEN);
      const init = (await a.request("initialize", { clientName: "x", session: {} })).result;
      a.notify("initialized", {});
      const started = await a.request("process/start", startParams("p", sleeper(marker)));
      assert.ok(started.result, JSON.stringify(started));
      await eventually(async () => (await pidsMentioning(marker)).length > 0, 10_000, "it");
      a.drop();

      // Without the token (or with a wrong one), not even the upgrade is let through.
      await assert.rejects(CodexWs.open(server.url, undefined), /HTTP 401/);
      await assert.rejects(CodexWs.open(server.url, `${TOKEN}x`), /HTTP 401/);

      const [b, resumed] = await resumeOnWs(server.url, init.session.id);
      try {
        assert.equal(resumed.session.id, init.session.id);
        assert.equal(resumed.session.resumed, true);
        b.notify("initialized", {});
        const list = (await b.request("process/list", {})).result;
        assert.deepEqual(list.processes.map((p: Msg) => p.processId), ["p"]);
      } finally {
        b.drop();
      }
    } finally {
      await stop();
      await killAll(dir, marker);
      await removeDir();
    }
  },
});
