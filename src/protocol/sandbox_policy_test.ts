import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "./errors.ts";
import {
  accessAt,
  allows,
  isWithin,
  MAX_SANDBOX_RULES,
  mountOrder,
  narrowerRuleBelow,
  sandboxPath,
  sandboxPathList,
  type SandboxPolicy,
  type SandboxRule,
} from "./sandbox_policy.ts";

function refused(run: () => unknown, message: RegExp): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, ErrorCode.InvalidParams);
    assert.match(err.message, message);
    return true;
  });
}

function policy(...rules: SandboxRule[]): SandboxPolicy {
  return { rules, network: false };
}

const workspace = policy(
  { path: "/", access: "read" },
  { path: "/work", access: "write" },
  { path: "/work/.git", access: "read" },
);

Deno.test("sandboxPath accepts absolute paths and file URIs, normalized", () => {
  assert.equal(sandboxPath("/work/src", "f"), "/work/src");
  assert.equal(sandboxPath("/", "f"), "/");
  assert.equal(sandboxPath("//work//src/", "f"), "/work/src");
  assert.equal(sandboxPath("/work/", "f"), "/work");
  assert.equal(sandboxPath("file:///srv/app", "f"), "/srv/app");
  assert.equal(sandboxPath("file:///srv/a%20b/", "f"), "/srv/a b");
  assert.equal(sandboxPath("file://localhost/srv", "f"), "/srv");
  assert.equal(sandboxPath("file:///", "f"), "/");
  assert.equal(sandboxPath("/a/.../b", "f"), "/a/.../b");
});

Deno.test("sandboxPath refuses relative paths, naming the field", () => {
  refused(
    () => sandboxPath("work", "sandbox.write[0]"),
    /^sandbox\.write\[0\] must be an absolute/,
  );
  refused(() => sandboxPath("", "x.path"), /^x\.path must be an absolute path, got ""/);
  refused(() => sandboxPath("./a", "x.path"), /^x\.path must be an absolute path/);
  refused(() => sandboxPath("file:a", "x.path"), /^x\.path must be an absolute file URI/);
  refused(() => sandboxPath("file://host/a", "x.path"), /^x\.path names a remote host/);
});

Deno.test("sandboxPath refuses NUL bytes", () => {
  refused(() => sandboxPath("/a\0b", "x.path"), /^x\.path must not contain NUL/);
  refused(() => sandboxPath("file:///a%00b", "x.path"), /^x\.path must not contain NUL/);
});

Deno.test("sandboxPath refuses . and .. segments", () => {
  refused(() => sandboxPath("/a/../b", "x.path"), /^x\.path must not contain "\." or "\.\."/);
  refused(() => sandboxPath("/a/./b", "x.path"), /^x\.path must not contain/);
  refused(() => sandboxPath("/..", "x.path"), /^x\.path must not contain/);
  refused(() => sandboxPath("/a/.", "x.path"), /^x\.path must not contain/);
});

Deno.test("sandboxPath refuses values that are not strings", () => {
  refused(() => sandboxPath(undefined, "x.path"), /^x\.path must be an absolute path, got nothing/);
  refused(() => sandboxPath(null, "x.path"), /^x\.path must be an absolute path, got null/);
  refused(() => sandboxPath(7, "x.path"), /^x\.path must be an absolute path, got 7/);
  refused(() => sandboxPath(["/a"], "x.path"), /^x\.path must be an absolute path/);
  refused(() => sandboxPath({ path: "/a" }, "x.path"), /^x\.path must be an absolute path/);
});

Deno.test("isWithin: the path itself and below, never a sibling prefix", () => {
  assert.ok(isWithin("/work", "/work"));
  assert.ok(isWithin("/work/a/b", "/work"));
  assert.ok(isWithin("/anything", "/"));
  assert.ok(isWithin("/", "/"));
  assert.ok(!isWithin("/work2", "/work"));
  assert.ok(!isWithin("/work2/a", "/work"));
  assert.ok(!isWithin("/wor", "/work"));
  assert.ok(!isWithin("/", "/work"));
});

Deno.test("accessAt: the most specific rule wins", () => {
  assert.equal(accessAt(workspace, "/etc/passwd"), "read");
  assert.equal(accessAt(workspace, "/work"), "write");
  assert.equal(accessAt(workspace, "/work/src/a.ts"), "write");
  assert.equal(accessAt(workspace, "/work/.git"), "read");
  assert.equal(accessAt(workspace, "/work/.git/config"), "read");
  assert.equal(accessAt(workspace, "/work/.gitignore"), "write");
  assert.equal(accessAt(workspace, "/"), "read");
});

Deno.test("accessAt: a narrower rule wins whatever the order", () => {
  const reversed = policy(...[...workspace.rules].reverse());
  assert.equal(accessAt(reversed, "/work/.git/config"), "read");
  assert.equal(accessAt(reversed, "/work/src"), "write");
  const denied = policy({ path: "/home/u/.ssh", access: "deny" }, { path: "/", access: "write" });
  assert.equal(accessAt(denied, "/home/u/.ssh/id_rsa"), "deny");
  assert.equal(accessAt(denied, "/home/u/notes"), "write");
});

Deno.test("accessAt: on the same path deny beats write beats read, in any order", () => {
  const orders: SandboxRule[][] = [
    [{ path: "/a", access: "read" }, { path: "/a", access: "write" }],
    [{ path: "/a", access: "write" }, { path: "/a", access: "read" }],
  ];
  for (const rules of orders) assert.equal(accessAt(policy(...rules), "/a/x"), "write");
  const all: SandboxRule[] = [
    { path: "/a", access: "read" },
    { path: "/a", access: "deny" },
    { path: "/a", access: "write" },
  ];
  for (let i = 0; i < all.length; i++) {
    const rotated = [...all.slice(i), ...all.slice(0, i)];
    assert.equal(accessAt(policy(...rotated), "/a"), "deny");
    assert.equal(accessAt(policy(...[...rotated].reverse()), "/a/b"), "deny");
  }
});

Deno.test("accessAt: deny where no rule applies", () => {
  assert.equal(accessAt(policy(), "/"), "deny");
  assert.equal(accessAt(policy(), "/work"), "deny");
  const work = policy({ path: "/work", access: "write" });
  assert.equal(accessAt(work, "/etc"), "deny");
  assert.equal(accessAt(work, "/"), "deny");
});

Deno.test("accessAt: a sibling with the same prefix is not within", () => {
  const work = policy({ path: "/", access: "read" }, { path: "/work", access: "write" });
  assert.equal(accessAt(work, "/work2"), "read");
  assert.equal(accessAt(work, "/work2/a"), "read");
  assert.equal(accessAt(policy({ path: "/work", access: "write" }), "/work2"), "deny");
});

Deno.test("allows: write includes read, deny includes nothing", () => {
  assert.ok(allows("read", "read"));
  assert.ok(!allows("read", "write"));
  assert.ok(allows("write", "read"));
  assert.ok(allows("write", "write"));
  assert.ok(!allows("deny", "read"));
  assert.ok(!allows("deny", "write"));
});

Deno.test("narrowerRuleBelow finds a stricter rule strictly below the path", () => {
  assert.deepEqual(narrowerRuleBelow(workspace, "/work", "write"), {
    path: "/work/.git",
    access: "read",
  });
  assert.equal(narrowerRuleBelow(workspace, "/work", "read"), undefined);
  assert.equal(narrowerRuleBelow(workspace, "/work/src", "write"), undefined);
  // The rule on the path itself is not below it.
  assert.equal(narrowerRuleBelow(workspace, "/work/.git", "write"), undefined);
  const denied = policy({ path: "/", access: "read" }, { path: "/etc/secret", access: "deny" });
  assert.deepEqual(narrowerRuleBelow(denied, "/", "read"), { path: "/etc/secret", access: "deny" });
  assert.equal(narrowerRuleBelow(denied, "/usr", "read"), undefined);
});

Deno.test("narrowerRuleBelow judges a rule by the access that wins at its path", () => {
  // A read rule overridden by a write rule on the same path grants write.
  const overridden = policy(
    { path: "/work", access: "write" },
    { path: "/work/sub", access: "read" },
    { path: "/work/sub", access: "write" },
  );
  assert.equal(narrowerRuleBelow(overridden, "/work", "write"), undefined);
  // A sibling with the same prefix is not below.
  const sibling = policy({ path: "/work", access: "write" }, { path: "/work2", access: "deny" });
  assert.equal(narrowerRuleBelow(sibling, "/work", "write"), undefined);
});

Deno.test("mountOrder: shallow paths first, ties by name", () => {
  const ordered = mountOrder(policy(
    { path: "/work/.git", access: "read" },
    { path: "/work", access: "write" },
    { path: "/tmp", access: "write" },
    { path: "/", access: "read" },
  ));
  assert.deepEqual(ordered.map((r) => r.path), ["/", "/tmp", "/work", "/work/.git"]);
});

Deno.test("mountOrder: one rule per path, the stricter kept", () => {
  const ordered = mountOrder(policy(
    { path: "/a", access: "write" },
    { path: "/", access: "read" },
    { path: "/a", access: "read" },
    { path: "/b", access: "read" },
    { path: "/b", access: "deny" },
    { path: "/b", access: "write" },
  ));
  assert.deepEqual(ordered, [
    { path: "/", access: "read" },
    { path: "/a", access: "write" },
    { path: "/b", access: "deny" },
  ]);
  assert.deepEqual(mountOrder(policy()), []);
});

Deno.test("sandboxPathList: absent is empty, paths are normalized", () => {
  assert.deepEqual(sandboxPathList(undefined, "sandbox.write"), []);
  assert.deepEqual(sandboxPathList(null, "sandbox.write"), []);
  assert.deepEqual(sandboxPathList([], "sandbox.write"), []);
  assert.deepEqual(sandboxPathList(["/a/", "file:///b", "//c"], "sandbox.write"), [
    "/a",
    "/b",
    "/c",
  ]);
  const max = Array.from({ length: MAX_SANDBOX_RULES }, (_, i) => `/p${i}`);
  assert.equal(sandboxPathList(max, "sandbox.write").length, MAX_SANDBOX_RULES);
});

Deno.test("sandboxPathList refuses a non-array, too many entries, and names a bad index", () => {
  refused(() => sandboxPathList("/a", "sandbox.write"), /^sandbox\.write must be an array/);
  refused(() => sandboxPathList({ 0: "/a" }, "sandbox.write"), /^sandbox\.write must be an array/);
  const tooMany = Array.from({ length: MAX_SANDBOX_RULES + 1 }, (_, i) => `/p${i}`);
  refused(
    () => sandboxPathList(tooMany, "sandbox.write"),
    /^sandbox\.write has 257 entries; at most 256/,
  );
  refused(() => sandboxPathList(["/a", "b"], "sandbox.write"), /^sandbox\.write\[1\] must be/);
  refused(() => sandboxPathList(["/a", "/b", "/c/.."], "sandbox.read"), /^sandbox\.read\[2\] must/);
  refused(() => sandboxPathList([3], "sandbox.write"), /^sandbox\.write\[0\] must be an absolute/);
});

Deno.test("sandboxPath refuses . and .. in file URIs too, encoded or not", () => {
  for (
    const uri of [
      "file:///a/../b",
      "file:///a/%2e%2e/b",
      "file:///a/./b",
      "file://localhost/a/%2E/b",
    ]
  ) {
    assert.throws(
      () => sandboxPath(uri, "f"),
      (e: unknown) =>
        e instanceof RpcError && e.code === -32602 && /^f must not contain/.test(e.message),
      uri,
    );
  }
  assert.equal(sandboxPath("file:///a/.../b", "f"), "/a/.../b");
});
