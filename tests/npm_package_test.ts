/**
 * The npm package as a user gets it: `npm pack` of what
 * `scripts/build_npm.ts` builds (the `npm/` of `deno task build:npm`), `npm install` of
 * the tarball into an empty project (node-pty and ws come from the
 * registry), then Node programs that use the installed package: its
 * `exec-server` command, its client, its server entry, and TypeScript
 * against its `.d.ts` files.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { VERSION } from "../src/version.ts";
import { runCoreChecks } from "./core_checks.ts";
import { ROOT, TestServer } from "./harness.ts";

/** Run a command to completion; a hung command is killed after `timeoutMs`. */
function run(
  cmd: string,
  args: string[],
  cwd: string,
  timeoutMs = 60_000,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { cwd, maxBuffer: 64 << 20, timeout: timeoutMs, killSignal: "SIGKILL" },
      (err, stdout, stderr) => {
        if (err) {
          reject(
            new Error(`${cmd} ${args.join(" ")} failed: ${err.message}\n${stdout}\n${stderr}`),
          );
        } else resolve({ stdout, stderr });
      },
    );
  });
}

/**
 * A Node program a user could write: import the client from the package,
 * start the package's own `exec-server` command and run commands through it.
 * It prints one JSON report on stdout.
 */
const CLIENT_SCRIPT = `
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { ExecServerClient, VERSION } from "exec-server";

const require = createRequire(import.meta.url);
const ptyLoaded = () =>
  Object.keys(require.cache).some((k) => k.includes("node-pty")) ||
  readFileSync("/proc/self/maps", "utf8").includes("pty.node");

const report = { version: VERSION, ptyAfterImport: ptyLoaded() };
const bin = new URL("./node_modules/.bin/exec-server", import.meta.url).pathname;
const client = await ExecServerClient.spawnStdio(bin, []);
try {
  report.serverInfo = client.serverInfo;
  const pipe = await client.run(["/bin/sh", "-c", "echo hello $0; echo oops >&2; exit 4", "npm"]);
  report.pipe = { stdout: pipe.stdout, stderr: pipe.stderr, exitCode: pipe.exitCode };
  const pty = await client.run({ argv: ["/bin/sh", "-c", "tty"], tty: true });
  report.pty = { stdout: pty.stdout, exitCode: pty.exitCode };
} finally {
  await client.close();
}

// The websocket client under Node (ws package), against the bin listening.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
writeFileSync("token", "npm-test-token\\n", { mode: 0o600 });
const server = spawn(bin, ["--listen", "ws://127.0.0.1:0", "--token-file", "token"], {
  stdio: ["ignore", "ignore", "pipe"],
});
const url = await new Promise((resolve, reject) => {
  let err = "";
  server.stderr.on("data", (d) => {
    err += d;
    const m = /listening on (ws:\\/\\/\\S+)/.exec(err);
    if (m) resolve(m[1]);
  });
  server.on("exit", (code) => reject(new Error("server exited " + code + ": " + err)));
});
try {
  const ws = await ExecServerClient.connectWebSocket(url, { token: "npm-test-token" });
  const r = await ws.run(["/bin/sh", "-c", "echo over websocket"]);
  report.websocket = { stdout: r.stdout, exitCode: r.exitCode };
  await ws.close();
  report.badToken = await ExecServerClient.connectWebSocket(url, { token: "wrong" })
    .then(() => "connected", (e) => e.name);
} finally {
  server.kill("SIGTERM");
}
// The client process itself never needed the addon: the server did.
report.ptyAfterClient = ptyLoaded();
console.log(JSON.stringify(report));
`;

/** Importing the server entry is cheap too; the addon loads on the first PTY only. */
const SERVER_SCRIPT = `
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { ExecServer } from "exec-server/server";
import { connectInProcess } from "exec-server";

const mapped = () => readFileSync("/proc/self/maps", "utf8").includes("pty.node");
const report = { hasExecServer: typeof ExecServer === "function", ptyAfterImport: mapped() };
const client = await connectInProcess();
try {
  const pty = await client.run({ argv: ["/bin/sh", "-c", "tty"], tty: true });
  report.pty = { stdout: pty.stdout, exitCode: pty.exitCode };
} finally {
  await client.close();
}
report.ptyAfterPty = mapped();
const require = createRequire(import.meta.url);
report.nodePtyFrom = require.resolve("node-pty/package.json");
console.log(JSON.stringify(report));
`;

/** TypeScript a user could write against the package's declarations. */
const CONSUMER_TS = `
import { ExecServerClient, type RunResult, VERSION } from "exec-server";
import { ExecServer, type ServerOptions } from "exec-server/server";
import { ErrorCode } from "exec-server/protocol";

export async function check(): Promise<string> {
  const client: ExecServerClient = await ExecServerClient.spawnStdio("exec-server");
  const result: RunResult = await client.run(["true"]);
  const options: Partial<ServerOptions> = { maxProcesses: 4 };
  const server: ExecServer = new ExecServer(options);
  void server;
  // Real types, not \`any\`: each misuse below must be rejected.
  // @ts-expect-error VERSION is a string
  const wrong: number = VERSION;
  // @ts-expect-error run() needs a command
  await client.run();
  void wrong;
  return \`\${VERSION} \${result.exitCode} \${typeof ErrorCode}\`;
}
`;

Deno.test("npm package: pack, install from the tarball, and use it from Node", async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), "exec-server-npm-test-"));
  const pkgDir = join(scratch, "npm");
  const app = join(scratch, "app");
  try {
    // The same build as `deno task build:npm`, into a private directory so
    // that nothing else writing npm/ meanwhile can change what is tested.
    await run(process.execPath, [
      "run",
      "--allow-all",
      join(ROOT, "scripts/build_npm.ts"),
      "--out",
      pkgDir,
    ], ROOT);
    let tarball = "";
    const ok = (passed: boolean): void => {
      // A later step would run what a failed one found broken (e.g. a bin
      // without its shebang runs under sh): stop at the first failure.
      if (!passed) throw new Error("stopping after a failed step");
    };
    ok(
      await t.step("npm pack ships the compiled package only", async () => {
        const { stdout } = await run(
          "npm",
          ["pack", "--json", "--pack-destination", scratch],
          pkgDir,
        );
        const [info] = JSON.parse(stdout);
        assert.equal(info.name, "exec-server");
        assert.equal(info.version, VERSION);
        tarball = join(scratch, info.filename);
        const files: string[] = info.files.map((f: { path: string }) => f.path);
        for (
          const f of [
            "package.json",
            "LICENSE",
            "esm/cli.js",
            "esm/mod.js",
            "esm/mod.d.ts",
            "esm/src/server/mod.js",
            "esm/src/process/pty_native.js",
          ]
        ) {
          assert.ok(files.includes(f), `${f} is not in the package: ${files.join(", ")}`);
        }
        const sources = files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
        assert.deepEqual(sources, [], "TypeScript sources were packed");
        assert.deepEqual(files.filter((f) => f.includes("_test")), [], "tests were packed");
        const pkg = JSON.parse(await readFile(join(pkgDir, "package.json"), "utf8"));
        assert.equal(pkg.bin["exec-server"], "./esm/cli.js");
        assert.ok(pkg.optionalDependencies["node-pty"]);
        assert.ok(pkg.dependencies.ws);
        const cli = await readFile(join(pkgDir, "esm/cli.js"), "utf8");
        assert.ok(cli.startsWith("#!/usr/bin/env node\n"), "cli.js has no node shebang");
      }),
    );

    ok(
      await t.step("npm install of the tarball into an empty project", async () => {
        await mkdir(app);
        await writeFile(
          join(app, "package.json"),
          // npm 11 runs dependencies' install scripts only when the project
          // allows them, as a user is told to (docs/install.md).
          JSON.stringify({
            name: "app",
            private: true,
            type: "module",
            // A tarball is approved by its file: spec, a registry package by name.
            allowScripts: { [`file:${tarball}`]: true, "node-pty": true },
          }),
        );
        // node-pty compiles its addon here: allow for a slow machine.
        await run("npm", ["install", "--no-audit", "--no-fund", tarball], app, 300_000);
        const installed = JSON.parse(
          await readFile(join(app, "node_modules/exec-server/package.json"), "utf8"),
        );
        assert.equal(installed.version, VERSION);
        assert.ok(existsSync(join(app, "node_modules/.bin/exec-server")));
        assert.ok(existsSync(join(app, "node_modules/node-pty/package.json")), "node-pty missing");
        // The package's postinstall patched node-pty for close-on-exec masters,
        // and the addon was built after the patch.
        const ptySource = join(app, "node_modules/node-pty/src/unix/pty.cc");
        const ptyAddon = join(app, "node_modules/node-pty/build/Release/pty.node");
        assert.match(await readFile(ptySource, "utf8"), /exec-server: master close-on-exec/);
        assert.ok((await stat(ptyAddon)).mtimeMs >= (await stat(ptySource)).mtimeMs);
      }),
    );

    const bin = join(app, "node_modules/.bin/exec-server");
    ok(
      await t.step("the exec-server command runs under Node", async () => {
        const { stdout } = await run(bin, ["--version"], app);
        assert.match(
          stdout,
          new RegExp(`^exec-server ${VERSION.replaceAll(".", "\\.")} \\(node v`),
        );
        await using s = await TestServer.start([], { command: [bin] });
        const ran = await runCoreChecks(s, { env: { PATH: "/usr/bin:/bin" }, dir: scratch });
        assert.deepEqual(ran.slice(0, 4), ["handshake", "pipe", "pty echo", "terminate"]);
        // The addon's write-behind (node-pty patched at install or build time).
        assert.equal(ran.includes("write-behind"), process.platform === "linux", `ran ${ran}`);
        assert.equal((await s.close()).code, 0);
        assert.deepEqual(s.badLines, []);
      }),
    );

    ok(
      await t.step(
        "a Node program imports the client and runs commands through the bin",
        async () => {
          await writeFile(join(app, "client.mjs"), CLIENT_SCRIPT);
          const { stdout } = await run("node", ["client.mjs"], app);
          const report = JSON.parse(stdout);
          assert.equal(report.version, VERSION);
          assert.equal(report.ptyAfterImport, false, "importing the package loaded node-pty");
          assert.deepEqual(report.serverInfo, { name: "exec-server", version: VERSION });
          assert.deepEqual(report.pipe, { stdout: "hello npm\n", stderr: "oops\n", exitCode: 4 });
          assert.equal(report.pty.exitCode, 0);
          assert.match(report.pty.stdout, /^\/dev\/pts\/\d+\r\n$/);
          assert.deepEqual(report.websocket, { stdout: "over websocket\n", exitCode: 0 });
          assert.equal(report.badToken, "ConnectError");
          assert.equal(report.ptyAfterClient, false, "the client loaded node-pty");
        },
      ),
    );

    ok(
      await t.step(
        "the server entry loads node-pty from the install on the first PTY only",
        async () => {
          await writeFile(join(app, "server.mjs"), SERVER_SCRIPT);
          const { stdout } = await run("node", ["server.mjs"], app);
          const report = JSON.parse(stdout);
          assert.equal(report.hasExecServer, true);
          assert.equal(
            report.ptyAfterImport,
            false,
            "importing exec-server/server loaded the addon",
          );
          assert.equal(report.pty.exitCode, 0);
          assert.match(report.pty.stdout, /^\/dev\/pts\/\d+\r\n$/);
          assert.equal(report.ptyAfterPty, true);
          assert.equal(report.nodePtyFrom, join(app, "node_modules/node-pty/package.json"));
        },
      ),
    );

    ok(
      await t.step("TypeScript accepts the package's declarations", async () => {
        await writeFile(join(app, "consumer.ts"), CONSUMER_TS);
        await writeFile(
          join(app, "tsconfig.json"),
          JSON.stringify({
            compilerOptions: {
              module: "NodeNext",
              moduleResolution: "NodeNext",
              target: "ES2022",
              strict: true,
              noEmit: true,
              // @types/node comes from this repository so the test needs no
              // extra install; checking all of it would only slow the test.
              skipLibCheck: true,
              typeRoots: [join(ROOT, "node_modules/@types")],
              types: ["node"],
              lib: ["ES2022", "DOM"],
            },
            files: ["consumer.ts"],
          }),
        );
        await run(
          "node",
          [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"],
          app,
        );
      }),
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
});
