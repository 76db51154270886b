/**
 * The differential test's machinery (tests/codex_diff_test.ts): the same
 * scripted request sequences sent to the real upstream `codex exec-server`
 * 0.171 and to this server, each in a scratch tree of its own built
 * identically, and the two transcripts compared by shape, by outcome, by
 * chosen values and by what is left on disk. Where the two are meant to
 * differ, an {@linkcode Intended} entry says so, and an entry that no
 * case needs any more fails the test too.
 *
 * Paths in what is recorded are rewritten to placeholders: a case's tree to
 * `<ROOT>`, a side's `$CODEX_HOME` to `<CODEX_HOME>`, the shared scratch
 * root to `<DIFF>`.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import process from "node:process";
import { type Msg, ROOT, serverCommand, TestServer } from "./harness.ts";
import { pidsMentioning } from "./sandbox_fixture.ts";
import {
  compareCase,
  covers,
  type Exact,
  failOn,
  type Intended,
  type Mismatch,
  type Observation,
  type SideName,
} from "./codex_diff_compare.ts";

export type { Intended } from "./codex_diff_compare.ts";
export { failOn } from "./codex_diff_compare.ts";

/** The upstream binary: CODEX_UPSTREAM_BIN, or where `.ci/run` installs the CLI. */
export const UPSTREAM_BIN: string = process.env.CODEX_UPSTREAM_BIN ||
  join(
    homedir(),
    ".cache/exec-server-ci/codex/node_modules/@openai/codex-linux-x64/vendor",
    "x86_64-unknown-linux-musl/bin/codex",
  );

/** Why the test cannot run here (the binary is absent), or undefined. */
export function upstreamMissing(): string | undefined {
  if (existsSync(UPSTREAM_BIN)) return undefined;
  return `codex diff skipped: no upstream binary at ${UPSTREAM_BIN} (set CODEX_UPSTREAM_BIN)`;
}

/**
 * `command` (EXEC_SERVER_CMD may name `node npm/esm/cli.js`) with its
 * program found on the test's PATH and relative files made absolute, as
 * the server runs in another directory with another PATH.
 */
function absoluteCommand(command: string[]): string[] {
  const [program, ...args] = command;
  const dirs = (process.env.PATH ?? "").split(":").filter((d) => d !== "");
  const found = program.includes("/")
    ? resolve(ROOT, program)
    : dirs.map((d) => join(d, program)).find((p) => existsSync(p)) ?? program;
  const fileArg = (a: string) =>
    !a.startsWith("-") && !isAbsolute(a) && existsSync(join(ROOT, a)) ? join(ROOT, a) : a;
  return [found, ...args.map(fileArg)];
}

/** What a case script gets: the same API on either side. */
export interface CaseCtx {
  /** The `file://` URI of a path in the case's tree ("" for the tree itself). */
  u(rel?: string): string;
  /** The plain path of a path in the case's tree. */
  p(rel?: string): string;
  /** This side's `$CODEX_HOME`. */
  codexHome: string;
  /** The shared home directory (`HOME` of both servers). */
  home: string;
  /** The server of this side. */
  server: TestServer;
  /** The `initialize` answer this side's server gave. */
  init: Msg;
  /** Send a request, record its response under `label`, and return it. */
  req(label: string, method: string, params?: unknown, exact?: Exact): Promise<Msg>;
  /** Record a value (normalized like responses). */
  record(label: string, value: unknown, exact?: Exact): void;
  /** Wait for a message of this side's server (a failure bound, not a sleep). */
  waitFor(pred: (m: Msg) => boolean, what: string): Promise<Msg>;
  /** Record a listing of the case's tree, compared exactly. */
  disk(label: string): Promise<void>;
}

/** A scripted sequence. */
export interface DiffCase {
  /** Unique across the suite: names it in reports and in {@linkcode Intended}. */
  name: string;
  /** Builds the case's tree (run once per side, before the script). */
  setup?: (tree: string, codexHome: string) => Promise<void>;
  /** Run on a server of its own that has had no handshake (the script sends `initialize`). */
  fresh?: boolean;
  /** The script: it must not branch on which side it runs. */
  run: (c: CaseCtx) => Promise<void>;
}

/** One server and its scratch directories. */
export class Side {
  readonly name: SideName;
  readonly dir: string;
  readonly codexHome: string;
  readonly diffRoot: string;
  readonly home: string;
  server!: TestServer;
  init!: Msg;

  constructor(name: SideName, diffRoot: string) {
    this.name = name;
    this.diffRoot = diffRoot;
    this.dir = join(diffRoot, name);
    this.codexHome = join(this.dir, "codex-home");
    this.home = join(diffRoot, "home");
  }

  /** The environment both sides get: nothing else of the test's own. */
  env(): string[] {
    const d = this.diffRoot;
    const denoDir = process.env.DENO_DIR || join(homedir(), ".cache/deno");
    return [
      `HOME=${this.home}`,
      `CODEX_HOME=${this.codexHome}`,
      `PATH=${d}/bin:/usr/local/bin:/usr/bin:/bin`,
      `TMPDIR=${d}/tmp`,
      `DENO_DIR=${denoDir}`,
      "LANG=C.UTF-8",
    ];
  }

  /** A server of this side, started in `dir` with {@linkcode env}, before any handshake. */
  spawn(): TestServer {
    const program = this.name === "upstream"
      ? [UPSTREAM_BIN, "exec-server", "--listen", "stdio"]
      : [...absoluteCommand(serverCommand()), "--log-level", "off"];
    const command = ["/usr/bin/env", "-i", "-C", this.dir, ...this.env(), ...program];
    return new TestServer([], { command, ours: this.name !== "upstream" });
  }

  /** Start the server in `dir` and complete the Codex handshake. */
  async start(): Promise<void> {
    await fsp.mkdir(join(this.dir, "t"), { recursive: true });
    this.server = this.spawn();
    this.init = await this.server.request("initialize", {
      clientName: "codex-environment",
      resumeSessionId: null,
    }, 60_000);
    this.server.notify("initialized", {});
  }

  /** Replace this side's paths with placeholders. */
  normalize(value: unknown, tree: string): unknown {
    const subs: [string, string][] = [
      [tree, "<ROOT>"],
      [this.codexHome, "<CODEX_HOME>"],
      [this.dir, "<SIDE>"],
      [this.diffRoot, "<DIFF>"],
    ];
    const fix = (s: string) => subs.reduce((acc, [from, to]) => acc.split(from).join(to), s);
    return walkStrings(value, fix);
  }
}

/** `value` with `fix` applied to every string in it (keys left alone). */
function walkStrings(value: unknown, fix: (s: string) => string): unknown {
  if (typeof value === "string") return fix(value);
  if (Array.isArray(value)) return value.map((v) => walkStrings(v, fix));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walkStrings(v, fix)]));
  }
  return value;
}

/** A listing of a tree: relative path → kind and contents (hashed) or link target. */
export async function listTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const visit = async (rel: string) => {
    const full = rel === "" ? root : join(root, rel);
    const names = (await fsp.readdir(full)).sort();
    for (const name of names) {
      const r = rel === "" ? name : `${rel}/${name}`;
      const st = await fsp.lstat(join(root, r));
      if (st.isSymbolicLink()) out[r] = `link -> ${await fsp.readlink(join(root, r))}`;
      else if (st.isDirectory()) {
        out[r] = "dir";
        await visit(r);
      } else if (st.isFile()) {
        const bytes = await fsp.readFile(join(root, r));
        const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
        out[r] = `file ${bytes.byteLength} ${hash}`;
      } else out[r] = "other";
    }
  };
  await visit("");
  return out;
}

/** Ours leaves `.NAME.RANDOM.partial` files: one name for them, whatever the random part. */
export function stableName(name: string): string {
  return name.replace(/(^|\/)\.([^/]+)\.[^./]+\.partial$/, "$1.$2.*.partial");
}

/** A listing with {@linkcode stableName}s. */
const stableListing = (listing: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(listing).map(([k, v]) => [stableName(k), v]));

/** The context a case script runs with on one side. */
function caseCtx(side: Side, server: TestServer, tree: string, seen: Observation[]): CaseCtx {
  const record = (label: string, value: unknown, exact?: Exact) => {
    seen.push({ label, value: side.normalize(value, tree), exact });
  };
  return {
    u: (rel = "") => `file://${rel === "" ? tree : join(tree, rel)}`,
    p: (rel = "") => (rel === "" ? tree : join(tree, rel)),
    codexHome: side.codexHome,
    home: side.home,
    server,
    init: side.init,
    async req(label, method, params, exact) {
      const answer = await server.request(method, params, 30_000);
      const { id: _id, jsonrpc: _j, ...rest } = answer;
      record(label, rest, exact);
      return answer;
    },
    record,
    waitFor: (pred, what) => server.waitFor(pred, 30_000, what),
    async disk(label) {
      const stable = stableListing(await listTree(tree));
      seen.push({ label, value: side.normalize(stable, tree), disk: true });
    },
  };
}

/** The scratch tree of a case on a side (a name that needs no escaping in a URI). */
const treeOf = (side: Side, c: DiffCase): string =>
  join(side.dir, "t", c.name.replace(/[^A-Za-z0-9._-]+/g, "-"));

/** Run one case on one side: its observations, then the final listing of its tree. */
async function runOn(side: Side, c: DiffCase): Promise<Observation[]> {
  const tree = treeOf(side, c);
  await fsp.mkdir(tree, { recursive: true });
  await c.setup?.(tree, side.codexHome);
  const seen: Observation[] = [];
  const server = c.fresh ? side.spawn() : side.server;
  const ctx = caseCtx(side, server, tree, seen);
  try {
    await c.run(ctx);
  } catch (err) {
    seen.push({ label: "!threw", value: String((err as Error)?.stack ?? err) });
  } finally {
    if (c.fresh) await server.close();
  }
  await ctx.disk("<disk>");
  return seen;
}

/** Both transcripts of a case, on stderr (CODEX_DIFF_DUMP=1, for looking). */
function dump(name: string, up: Observation[], ours: Observation[]): void {
  for (let i = 0; i < Math.max(up.length, ours.length); i++) {
    console.error(`== ${name} / ${up[i]?.label ?? ours[i]?.label}`);
    console.error(`  upstream: ${JSON.stringify(up[i]?.value)}`);
    console.error(`  ours:     ${JSON.stringify(ours[i]?.value)}`);
  }
}

/** Both servers of a group of cases, in one scratch root. */
export class Pair {
  readonly root: string;
  readonly upstream: Side;
  readonly ours: Side;

  private constructor(root: string) {
    this.root = root;
    this.upstream = new Side("upstream", root);
    this.ours = new Side("ours", root);
  }

  /**
   * A scratch root outside /tmp (upstream refuses its helper aliases under
   * /tmp), with the shared HOME and TMPDIR and a PATH directory holding the
   * `codex-linux-sandbox` link upstream's sandboxed calls run through.
   */
  static async create(prepareCodexHome?: (codexHome: string) => Promise<void>): Promise<Pair> {
    const base = join(homedir(), ".cache/exec-server-ci");
    await fsp.mkdir(base, { recursive: true });
    const pair = new Pair(await fsp.realpath(await fsp.mkdtemp(join(base, "diff-"))));
    for (const d of ["home", "tmp", "bin"]) await fsp.mkdir(join(pair.root, d));
    await fsp.symlink(UPSTREAM_BIN, join(pair.root, "bin/codex-linux-sandbox"));
    for (const side of [pair.upstream, pair.ours]) {
      await fsp.mkdir(side.codexHome, { recursive: true });
      await prepareCodexHome?.(side.codexHome);
    }
    try {
      await Promise.all([pair.upstream.start(), pair.ours.start()]);
    } catch (err) {
      await pair.close();
      throw err;
    }
    return pair;
  }

  /** Run every case on both sides at once, case after case; all mismatches. */
  async run(cases: DiffCase[]): Promise<Mismatch[]> {
    const out: Mismatch[] = [];
    for (const c of cases) {
      const [up, ours] = await Promise.all([runOn(this.upstream, c), runOn(this.ours, c)]);
      if (process.env.CODEX_DIFF_DUMP) dump(c.name, up, ours);
      out.push(...compareCase(c.name, up, ours));
    }
    return out;
  }

  /** Stop both servers (stdin closed, as a client leaving). */
  async stop(): Promise<void> {
    for (const side of [this.upstream, this.ours]) {
      if (!side.server) continue;
      side.server.child.stdin!.end();
      const timer = setTimeout(() => side.server.kill(), 10_000);
      await side.server.exited;
      clearTimeout(timer);
    }
  }

  /** What the servers left in the cases' trees once they exited. */
  async afterExit(cases: DiffCase[]): Promise<Mismatch[]> {
    const out: Mismatch[] = [];
    for (const c of cases) {
      const [up, ours] = await Promise.all([this.upstream, this.ours].map(async (side) => {
        const tree = treeOf(side, c);
        const value = side.normalize(stableListing(await listTree(tree)), tree);
        return [{ label: "<after exit>", value, disk: true }];
      }));
      out.push(...compareCase(c.name, up, ours));
    }
    return out;
  }

  /** Stop both servers and remove the scratch root. */
  async close(): Promise<void> {
    await this.stop();
    // A safety net: whatever a server left running in the scratch root (bubblewrap's
    // processes name it) is this test's own doing.
    for (const pid of await pidsMentioning(this.root)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    if (process.env.CODEX_DIFF_KEEP) console.error(`kept ${this.root}`);
    else await fsp.rm(this.root, { recursive: true, force: true });
  }
}

/**
 * Run cases against both servers and fail on every mismatch not covered
 * by `intended`, and on every entry of `intended` naming one of these
 * cases that covered nothing (unless it `mayNotOccur`). Returns the
 * entries that covered something (the caller checks the `*` ones).
 */
export async function diffCases(
  cases: DiffCase[],
  intended: Intended[],
  prepareCodexHome?: (codexHome: string) => Promise<void>,
): Promise<Set<Intended>> {
  const names = new Set(cases.map((c) => c.name));
  if (names.size !== cases.length) throw new Error("case names must be unique");
  const pair = await Pair.create(prepareCodexHome);
  let mismatches: Mismatch[];
  try {
    mismatches = await pair.run(cases);
    await pair.stop();
    mismatches.push(...await pair.afterExit(cases));
  } finally {
    await pair.close();
  }
  const used = new Set<Intended>();
  const unexplained = mismatches.filter((m) => {
    const entry = intended.find((e) => covers(e, m));
    if (entry) used.add(entry);
    return !entry;
  });
  const stale = intended.filter((e) => names.has(e.case) && !used.has(e) && !e.mayNotOccur);
  failOn(unexplained, stale);
  return used;
}
