import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "./errors.ts";
import { checkCodexSandbox, MINIMAL_READ_PATHS, resolveCodexSandbox } from "./codex_sandbox.ts";

const special = (kind: string, subpath?: string) => ({
  type: "special",
  value: subpath === undefined ? { kind } : { kind, subpath },
});

/** The `sandbox` the Codex CLI sends for workspace-write. */
function workspaceWrite(): Record<string, unknown> {
  return {
    permissions: {
      type: "managed",
      file_system: {
        type: "restricted",
        entries: [
          { path: special("root"), access: "read" },
          { path: special("project_roots"), access: "write" },
          { path: special("slash_tmp"), access: "write" },
          { path: special("tmpdir"), access: "write" },
          {
            path: special("project_roots", ".git"),
            access: "read",
            missing_path_behavior: "skip",
          },
        ],
      },
      network: "restricted",
    },
    cwd: "file:///srv/app",
    workspaceRoots: ["file:///srv/app"],
    userHomeDir: "file:///root",
    policyContext: {},
    windowsSandboxLevel: "disabled",
    useLegacyLandlock: false,
  };
}

/** Workspace-write with its entries replaced. */
function withEntries(
  entries: unknown,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const s = workspaceWrite();
  const perms = s.permissions as Record<string, unknown>;
  return {
    ...s,
    ...extra,
    permissions: { ...perms, file_system: { type: "restricted", entries } },
  };
}

function resolve(value: unknown, tmpdir?: string) {
  const checked = checkCodexSandbox(value);
  assert.ok(checked);
  return resolveCodexSandbox(checked, tmpdir);
}

function refused(run: () => unknown, field: string, code: number = ErrorCode.InvalidParams): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, code);
    assert.ok(err.message.includes(field), `"${err.message}" should name ${field}`);
    return true;
  });
}

const E0 = "sandbox.permissions.file_system.entries[0]";

Deno.test("workspace-write resolves to the CLI's rules", () => {
  assert.deepEqual(resolve(workspaceWrite(), "/var/tmp/x"), {
    rules: [
      { path: "/", access: "read" },
      { path: "/srv/app", access: "write" },
      { path: "/tmp", access: "write" },
      { path: "/var/tmp/x", access: "write" },
      { path: "/srv/app/.git", access: "read" },
    ],
    network: false,
  });
});

Deno.test("tmpdir grants nothing without TMPDIR or temporaryDirectories", () => {
  const paths = resolve(workspaceWrite()).rules.map((r) => r.path);
  assert.deepEqual(paths, ["/", "/srv/app", "/tmp", "/srv/app/.git"]);
  // A TMPDIR that is not an absolute path is ignored, not trusted.
  assert.deepEqual(resolve(workspaceWrite(), "tmp").rules.map((r) => r.path), paths);
});

Deno.test("tmpdir prefers temporaryDirectories over the TMPDIR argument", () => {
  const s = { ...workspaceWrite(), temporaryDirectories: ["/t1", "file:///t2/"] };
  const tmp = resolve(s, "/ignored").rules.filter((r) => r.path.startsWith("/t"));
  assert.deepEqual(tmp.map((r) => r.path), ["/tmp", "/t1", "/t2"]);
});

Deno.test("project_roots: every workspace root, else cwd; current_working_directory alias", () => {
  const roots = { workspaceRoots: ["/a", "file:///b"], cwd: "/c" };
  const twoRoots = resolve(
    withEntries([{ path: special("project_roots"), access: "write" }], roots),
  );
  assert.deepEqual(twoRoots.rules.map((r) => r.path), ["/a", "/b"]);
  const cwdOnly = withEntries(
    [{ path: special("current_working_directory", "x"), access: "read" }],
    {
      workspaceRoots: [],
      cwd: "/c",
    },
  );
  assert.deepEqual(resolve(cwdOnly).rules, [{ path: "/c/x", access: "read" }]);
  const atRoot = withEntries([{ path: special("project_roots", ".git"), access: "read" }], {
    workspaceRoots: ["/"],
  });
  assert.deepEqual(resolve(atRoot).rules, [{ path: "/.git", access: "read" }]);
});

Deno.test("project_roots with no workspaceRoots and no cwd is refused at resolve time", () => {
  const s = withEntries([{ path: special("project_roots"), access: "write" }]);
  delete s.workspaceRoots;
  delete s.cwd;
  const checked = checkCodexSandbox(s);
  assert.ok(checked);
  refused(() => resolveCodexSandbox(checked), "project_roots", ErrorCode.InvalidRequest);
  // Without project_roots the same context is fine.
  const other = { ...s, permissions: withEntries([]).permissions };
  assert.deepEqual(resolve(other).rules, []);
});

Deno.test("explicit paths, minimal, and the none alias of deny", () => {
  const policy = resolve(withEntries([
    { path: { type: "path", path: "file:///opt/tool/" }, access: "read" },
    { path: special("minimal"), access: "read" },
    { path: { type: "path", path: "/srv/app/secret" }, access: "none" },
    { path: { type: "path", path: "/srv/app/private" }, access: "deny" },
  ]));
  assert.deepEqual(policy.rules, [
    { path: "/opt/tool", access: "read" },
    ...MINIMAL_READ_PATHS.map((path) => ({ path, access: "read" })),
    { path: "/srv/app/secret", access: "deny" },
    { path: "/srv/app/private", access: "deny" },
  ]);
});

Deno.test("network: restricted is false, enabled is true", () => {
  const s = workspaceWrite();
  const perms = s.permissions as Record<string, unknown>;
  assert.equal(resolve(s).network, false);
  assert.equal(resolve({ ...s, permissions: { ...perms, network: "enabled" } }).network, true);
});

Deno.test("no sandbox: absent, null, or disabled", () => {
  assert.equal(checkCodexSandbox(undefined), null);
  assert.equal(checkCodexSandbox(null), null);
  assert.equal(checkCodexSandbox({ permissions: { type: "disabled" } }), null);
});

Deno.test("external and unrestricted are a single write rule on /", () => {
  const external = { permissions: { type: "external", network: "enabled" } };
  assert.deepEqual(resolve(external), { rules: [{ path: "/", access: "write" }], network: true });
  const unrestricted = {
    ...workspaceWrite(),
    permissions: { type: "managed", file_system: { type: "unrestricted" }, network: "restricted" },
  };
  assert.deepEqual(resolve(unrestricted), {
    rules: [{ path: "/", access: "write" }],
    network: false,
  });
});

/** Refused with one entry, the error naming `sandbox.permissions.file_system.entries[0]<field>`. */
function entryRefused(entry: unknown, field: string, code: number = ErrorCode.InvalidParams): void {
  refused(() => checkCodexSandbox(withEntries([entry])), `${E0}${field}`, code);
}

Deno.test("a bad special kind or path type names the field", () => {
  entryRefused({ path: special("home"), access: "read" }, ".path.value.kind");
  entryRefused({ path: special("kind"), access: "read" }, ".path.value.kind");
  entryRefused({ path: { type: "file", path: "/a" }, access: "read" }, ".path.type");
  entryRefused({ path: "/a", access: "read" }, ".path must be an object");
  entryRefused({ path: { type: "special" }, access: "read" }, ".path.value must be an object");
});

Deno.test("a bad path in an entry names the field", () => {
  for (const path of ["srv/app", "/srv/../etc", "/srv/./app", "/a\0b", "file:a", 5]) {
    entryRefused({ path: { type: "path", path }, access: "read" }, ".path.path");
  }
});

Deno.test("a subpath must be relative, without . or ..", () => {
  for (const subpath of ["/etc", "../etc", "a/../../etc", "./a", "a\0b", "", 3]) {
    const path = { type: "special", value: { kind: "project_roots", subpath } };
    entryRefused({ path, access: "read" }, ".path.value.subpath");
  }
});

Deno.test("unknown fields are refused at every level", () => {
  refused(() => checkCodexSandbox({ ...workspaceWrite(), extra: 1 }), "sandbox.extra");
  const s = workspaceWrite();
  const perms = s.permissions as Record<string, unknown>;
  refused(
    () => checkCodexSandbox({ ...s, permissions: { ...perms, extra: 1 } }),
    "sandbox.permissions.extra",
  );
  entryRefused({ path: special("root"), access: "read", extra: 1 }, ".extra");
  entryRefused({ path: { ...special("root"), extra: 1 }, access: "read" }, ".path.extra");
  entryRefused({ path: special("root", "a"), access: "read" }, ".path.value.subpath");
});

Deno.test("bad access, network and missing_path_behavior values are refused", () => {
  for (const access of ["execute", "READ", undefined, null, 1]) {
    entryRefused({ path: special("root"), access }, ".access");
  }
  const s = workspaceWrite();
  const perms = s.permissions as Record<string, unknown>;
  for (const network of ["full", true, undefined]) {
    refused(
      () => checkCodexSandbox({ ...s, permissions: { ...perms, network } }),
      "sandbox.permissions.network",
    );
  }
  const missing = { path: special("root"), access: "read", missing_path_behavior: "create" };
  entryRefused(missing, ".missing_path_behavior");
});

Deno.test("entries must be an array of at most 256", () => {
  for (const entries of [undefined, null, {}, "root"]) {
    refused(
      () => checkCodexSandbox(withEntries(entries)),
      "sandbox.permissions.file_system.entries",
    );
  }
  const entry = { path: special("root"), access: "read" };
  assert.ok(checkCodexSandbox(withEntries(Array(256).fill(entry))));
  refused(
    () => checkCodexSandbox(withEntries(Array(257).fill(entry))),
    "sandbox.permissions.file_system.entries has 257",
  );
  refused(() => checkCodexSandbox(withEntries([entry, "x"])), "file_system.entries[1]");
});

Deno.test("a sandbox or its permissions that is not an object is refused", () => {
  for (const value of ["workspace-write", 1, true, []]) {
    refused(() => checkCodexSandbox(value), "sandbox must be an object");
  }
  refused(() => checkCodexSandbox({}), "sandbox.permissions must be an object");
  refused(() => checkCodexSandbox({ permissions: { type: "open" } }), "sandbox.permissions.type");
  refused(
    () => checkCodexSandbox({ permissions: { type: "managed", network: "restricted" } }),
    "sandbox.permissions.file_system must be an object",
  );
});

Deno.test("bad context paths name their field", () => {
  refused(() => checkCodexSandbox({ ...workspaceWrite(), cwd: "srv" }), "sandbox.cwd");
  refused(
    () => checkCodexSandbox({ ...workspaceWrite(), workspaceRoots: ["/a", "b"] }),
    "sandbox.workspaceRoots[1]",
  );
  refused(
    () => checkCodexSandbox({ ...workspaceWrite(), temporaryDirectories: "/tmp" }),
    "sandbox.temporaryDirectories",
  );
});

Deno.test("glob_pattern entries cannot be enforced and are refused as a request", () => {
  const glob = { path: { type: "glob_pattern", pattern: "**/*.env" }, access: "deny" };
  entryRefused(glob, ".path", ErrorCode.InvalidRequest);
});
