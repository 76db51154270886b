/**
 * Black-box tests that nothing a server started outlives the server, even
 * when the server dies without warning (SIGKILL, as the OOM killer or a
 * container stop would): per runtime (Deno source, Node build, the single
 * binary), on stdio, with a websocket client attached, and with a Codex
 * session detached in its grace period; that the reaper which does it
 * ends with a server that exits cleanly; and that it never kills a process
 * that got the pid of one the server had started.
 *
 * Every process is found by a marker in its argv[0] (`exec -a`), never by
 * pid alone: the processes are re-parented when the server dies, and a pid
 * may be reused.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { DIST_BINARY, ensureBinary } from "./binary_fixture.ts";
import { CodexWs, startTokenServer } from "./codex_cli_fixture.ts";
import {
  denoServerCommand,
  ENV,
  eventually,
  isAlive,
  type Msg,
  nodeServerCommand,
  pidsByArgv0,
  procStat,
  TestServer,
} from "./harness.ts";
import { canSteerPids, runPidScenario } from "./pid_scenario_fixture.ts";
import { bwrapMissing } from "./sandbox_fixture.ts";
import type { WsServer } from "./ws_fixture.ts";

/** How long the processes may outlive the server (the bound). */
const DEADLINE_MS = 2000;

const TOKEN = "orphans-test-token-0123456789abcdef";

/** The three builds of the server. */
const RUNTIMES: { name: string; command: () => Promise<string[]> }[] = [
  { name: "deno", command: () => Promise.resolve(denoServerCommand()) },
  { name: "node", command: () => Promise.resolve(nodeServerCommand()) },
  {
    name: "binary",
    command: async () => {
      await ensureBinary();
      return [DIST_BINARY];
    },
  },
];

/** One process to start: its argv, whether on a PTY, its markers. */
interface Victim {
  argv: string[];
  tty: boolean;
  /** Only where the host can run a bubblewrap sandbox. */
  sandboxed?: boolean;
  /** It exits at once, leaving its markers running in its group. */
  exits?: boolean;
  /** The argv[0] of each process it leaves running. */
  markers: string[];
}

/**
 * The processes of the issue, marked with `m`: first a process that exits
 * at once and leaves a child in its group (so the server knows the group
 * only by its members); then on pipes and on a PTY, a process and its
 * background child; a descendant that moved to a session
 * of its own; a PTY process (and child) that ignores SIGTERM and SIGHUP,
 * which the terminal's hang-up does not end; and with `sandbox` (where
 * bubblewrap is installed), the same pair inside a bubblewrap sandbox, on
 * pipes and on a PTY.
 */
function victims(m: string, sandbox: boolean): Victim[] {
  const pair = (name: string) =>
    `(exec -a ${m}-${name}-bg sleep 300) & exec -a ${m}-${name} sleep 300`;
  const list: Victim[] = [
    {
      argv: ["bash", "-c", `(exec -a ${m}-left sleep 300) & exit 0`],
      tty: false,
      exits: true,
      markers: ["left"],
    },
    { argv: ["bash", "-c", pair("pipe")], tty: false, markers: ["pipe", "pipe-bg"] },
    { argv: ["bash", "-c", pair("pty")], tty: true, markers: ["pty", "pty-bg"] },
    {
      argv: ["bash", "-c", `setsid bash -c 'exec -a ${m}-setsid sleep 300' & ${pair("esc")}`],
      tty: false,
      markers: ["setsid", "esc", "esc-bg"],
    },
    {
      argv: ["bash", "-c", `trap '' TERM HUP; ${pair("stubborn")}`],
      tty: true,
      markers: ["stubborn", "stubborn-bg"],
    },
  ];
  if (sandbox && !bwrapMissing()) {
    for (const tty of [false, true]) {
      const name = tty ? "sandbox-pty" : "sandbox-pipe";
      list.push({
        argv: ["bash", "-c", pair(name)],
        tty,
        sandboxed: true,
        markers: [name, `${name}-bg`],
      });
    }
  }
  return list.map((v) => ({ ...v, markers: v.markers.map((k) => `${m}-${k}`) }));
}

/** A unique marker for one test. */
function marker(what: string): string {
  return `orphan-${what}-${process.pid}-${Math.floor(Math.random() * 1e9)}`;
}

/** The live pids of every marker, by marker. */
async function alive(markers: string[]): Promise<Map<string, number[]>> {
  const found = new Map<string, number[]>();
  for (const m of markers) found.set(m, await pidsByArgv0(m));
  return found;
}

/** How a test starts processes on its connection. */
interface Starter {
  /** Send `process/start` for `v` as `id`; the response. */
  start(v: Victim, id: string): Promise<Msg>;
  /** Wait for `process/exited` of `id`. */
  exited(id: string): Promise<unknown>;
}

/**
 * Start every victim in order and wait until every marker runs. One that
 * exits at once is waited for before the next starts.
 */
async function startVictims(list: Victim[], starter: Starter): Promise<void> {
  for (const [i, v] of list.entries()) {
    const res = await starter.start(v, `v${i}`);
    assert.ok(res.result, `starting ${v.markers[0]}: ${JSON.stringify(res)}`);
    if (v.exits) await starter.exited(`v${i}`);
  }
  const markers = list.flatMap((v) => v.markers);
  await eventually(
    async () => [...(await alive(markers)).values()].every((pids) => pids.length > 0),
    10_000,
    `every process running (${markers.join(", ")})`,
  );
}

/** The reaper of server `pid` (a child of the server named exec-server-reaper). */
async function reaperOf(pid: number): Promise<number | undefined> {
  for (const r of await pidsByArgv0("exec-server-reaper")) {
    if ((await procStat(r))?.ppid === pid) return r;
  }
  return undefined;
}

/**
 * SIGKILL the server `pid`, then require every marker gone within
 * {@linkcode DEADLINE_MS}, and the reaper with them.
 */
async function killServerAndCheck(pid: number, markers: string[]): Promise<void> {
  const reaper = await reaperOf(pid);
  assert.ok(reaper, `server ${pid} has no exec-server-reaper child`);
  process.kill(pid, "SIGKILL");
  try {
    await eventually(
      async () => [...(await alive(markers)).values()].every((pids) => pids.length === 0),
      DEADLINE_MS,
      "no survivor",
    );
  } catch (err) {
    const left = [...(await alive(markers)).entries()].filter(([, pids]) => pids.length > 0);
    throw new Error(`${(err as Error).message}: ${JSON.stringify(left)}`);
  }
  await eventually(async () => !(await isAlive(reaper)), DEADLINE_MS, "the reaper's exit");
}

/** SIGKILL whatever a failed test left running (by marker, then by pid). */
async function cleanup(markers: string[]): Promise<void> {
  for (const pids of (await alive(markers)).values()) {
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone.
      }
    }
  }
}

/** A v0 `process/start` for `v` (the sandbox: read everything, write nothing). */
function v0Start(v: Victim, id: string): Msg {
  return {
    processId: id,
    argv: v.argv,
    cwd: "/tmp",
    env: ENV,
    tty: v.tty,
    ...(v.sandboxed ? { sandbox: { mode: "restricted" } } : {}),
  };
}

/** Wait for `process/exited` of `id` on a websocket client. */
function exitOn(c: CodexWs, id: string): Promise<Msg> {
  return c.waitFor((m) => m.method === "process/exited" && m.params.processId === id);
}

/** A websocket server (logging connection ends) and the function that stops it. */
async function wsServer(
  command: string[],
  extra: string[] = [],
): Promise<[WsServer, () => Promise<void>]> {
  return await startTokenServer(TOKEN, ["--log-level", "info", ...extra], command);
}

for (const runtime of RUNTIMES) {
  Deno.test(`${runtime.name}: SIGKILL to a stdio server leaves no process behind`, async () => {
    const list = victims(marker(`${runtime.name}-stdio`), true);
    const s = await TestServer.start([], { command: await runtime.command() });
    const markers = list.flatMap((v) => v.markers);
    try {
      await startVictims(list, {
        start: (v, id) => s.request("process/start", v0Start(v, id)),
        exited: (id) => s.waitExited(id),
      });
      await killServerAndCheck(s.child.pid!, markers);
      assert.equal((await s.exited).signal, "SIGKILL");
    } finally {
      s.kill();
      await cleanup(markers);
    }
  });

  Deno.test(`${runtime.name}: SIGKILL with a websocket client attached leaves nothing`, async () => {
    const list = victims(marker(`${runtime.name}-ws`), true);
    const [server, stop] = await wsServer(await runtime.command());
    const markers = list.flatMap((v) => v.markers);
    try {
      const c = await CodexWs.open(server.url, TOKEN);
      const init = await c.request("initialize", { clientName: "orphans-test" });
      assert.equal(init.result?.protocolVersion, "exec-server.v0", JSON.stringify(init));
      c.notify("initialized", {});
      await startVictims(list, {
        start: (v, id) => c.request("process/start", v0Start(v, id)),
        exited: (id) => exitOn(c, id),
      });
      await killServerAndCheck(server.child.pid!, markers);
      c.drop();
    } finally {
      await stop();
      await cleanup(markers);
    }
  });

  Deno.test(`${runtime.name}: SIGKILL during a Codex session's grace period leaves nothing`, async () => {
    const list = victims(marker(`${runtime.name}-grace`), false);
    const [server, stop] = await wsServer(await runtime.command(), [
      "--session-grace-ms",
      "600000",
    ]);
    const markers = list.flatMap((v) => v.markers);
    try {
      const c = await CodexWs.open(server.url, TOKEN);
      assert.ok((await c.initialize(null)).result?.sessionId);
      await startVictims(list, {
        start: (v, id) =>
          c.request("process/start", {
            processId: id,
            argv: v.argv,
            cwd: "file:///tmp",
            env: ENV,
            tty: v.tty,
            sandbox: null,
          }),
        exited: (id) => exitOn(c, id),
      });
      c.drop();
      // Detached: the session and its processes wait for a resume.
      await eventually(() => /connection \S+ ended/.test(server.stderr), 10_000, "the detach");
      const running = await alive(markers);
      assert.ok([...running.values()].every((pids) => pids.length > 0), "killed at detach");
      await killServerAndCheck(server.child.pid!, markers);
    } finally {
      await stop();
      await cleanup(markers);
    }
  });
}

Deno.test("a server that exits cleanly takes its reaper along", async () => {
  const s = await TestServer.start();
  await s.start("one", ["true"]);
  await s.waitExited("one");
  const reaper = await reaperOf(s.child.pid!);
  assert.ok(reaper, "no reaper after a start");
  assert.equal((await s.close()).code, 0);
  await eventually(async () => !(await isAlive(reaper)), DEADLINE_MS, "the reaper's exit");
});

for (const runtime of RUNTIMES) {
  Deno.test({
    name: `${runtime.name}: after SIGKILL the reaper spares a reused pid`,
    ignore: !canSteerPids(),
    fn: async () => {
      await runPidScenario(await runtime.command(), "kill");
    },
  });
}
