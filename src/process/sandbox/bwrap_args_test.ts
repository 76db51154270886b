import assert from "node:assert/strict";
import { bwrapArgs, type BwrapOptions, type SandboxMount } from "./bwrap_args.ts";

const root: SandboxMount = { path: "/", access: "read", isDirectory: true };
const work: SandboxMount = { path: "/work", access: "write", isDirectory: true };

function args(options: Partial<BwrapOptions>): string[] {
  return bwrapArgs({ mounts: [root, work], network: false, tty: false, cwd: "/work", ...options });
}

/** Whether `seq` occurs in `list` as consecutive elements, and where. */
function indexOfSeq(list: string[], ...seq: string[]): number {
  for (let i = 0; i + seq.length <= list.length; i++) {
    if (seq.every((s, j) => list[i + j] === s)) return i;
  }
  return -1;
}

Deno.test("bwrapArgs: the documented example", () => {
  assert.deepEqual(args({}), [
    "--die-with-parent",
    "--unshare-pid",
    "--unshare-ipc",
    "--new-session",
    "--unshare-net",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--bind",
    "/work",
    "/work",
    "--chdir",
    "/work",
  ]);
});

Deno.test("bwrapArgs: --new-session only without a terminal", () => {
  assert.ok(args({ tty: false }).includes("--new-session"));
  assert.ok(!args({ tty: true }).includes("--new-session"));
});

Deno.test("bwrapArgs: --unshare-net only with the network restricted", () => {
  assert.ok(args({ network: false }).includes("--unshare-net"));
  assert.ok(!args({ network: true }).includes("--unshare-net"));
  assert.deepEqual(args({ network: true, tty: true }).slice(0, 4), [
    "--die-with-parent",
    "--unshare-pid",
    "--unshare-ipc",
    "--ro-bind",
  ]);
});

Deno.test("bwrapArgs: read is a read-only bind, write a bind", () => {
  const a = args({
    mounts: [
      root,
      { path: "/srv", access: "write", isDirectory: true },
      { path: "/srv/ro", access: "read", isDirectory: true },
      { path: "/srv/file", access: "read", isDirectory: false },
    ],
    cwd: "/srv",
  });
  assert.deepEqual(a.slice(a.indexOf("/proc") + 1), [
    "--bind",
    "/srv",
    "/srv",
    "--ro-bind",
    "/srv/ro",
    "/srv/ro",
    "--ro-bind",
    "/srv/file",
    "/srv/file",
    "--chdir",
    "/srv",
  ]);
});

Deno.test("bwrapArgs: a denied directory is a tmpfs made read-only after the mounts", () => {
  const a = args({
    mounts: [
      root,
      work,
      { path: "/work/secret", access: "deny", isDirectory: true },
      { path: "/work/secret/open", access: "write", isDirectory: true },
    ],
  });
  const tmpfs = indexOfSeq(a, "--tmpfs", "/work/secret");
  const inner = indexOfSeq(a, "--bind", "/work/secret/open", "/work/secret/open");
  const remount = indexOfSeq(a, "--remount-ro", "/work/secret");
  assert.ok(tmpfs > 0 && inner > tmpfs && remount > inner, a.join(" "));
  assert.deepEqual(a.slice(-4), ["--remount-ro", "/work/secret", "--chdir", "/work"]);
  assert.ok(!a.includes("/dev/null"));
});

Deno.test("bwrapArgs: denied directories are made read-only deepest first", () => {
  const a = args({
    mounts: [
      root,
      { path: "/a", access: "deny", isDirectory: true },
      { path: "/a/b", access: "write", isDirectory: true },
      { path: "/a/b/c", access: "deny", isDirectory: true },
    ],
    cwd: "/",
  });
  assert.deepEqual(a.slice(-6), ["--remount-ro", "/a/b/c", "--remount-ro", "/a", "--chdir", "/"]);
});

Deno.test("bwrapArgs: a denied file is masked by /dev/null, never remounted", () => {
  const a = args({
    mounts: [root, work, { path: "/work/.env", access: "deny", isDirectory: false }],
  });
  assert.ok(indexOfSeq(a, "--ro-bind", "/dev/null", "/work/.env") > 0);
  assert.ok(!a.includes("--tmpfs"));
  assert.ok(!a.includes("--remount-ro"));
});

Deno.test("bwrapArgs: without a readable / the root is made read-only last", () => {
  const a = args({ mounts: [work] });
  assert.equal(indexOfSeq(a, "--ro-bind", "/", "/"), -1);
  assert.deepEqual(a.slice(-5), ["/work", "--remount-ro", "/", "--chdir", "/work"]);
  const denied = args({ mounts: [{ ...root, access: "deny" }, work] });
  assert.equal(denied.indexOf("--tmpfs"), -1, "a denied / is the empty root, not a tmpfs");
  assert.deepEqual(denied.slice(-4), ["--remount-ro", "/", "--chdir", "/work"]);
});

Deno.test("bwrapArgs: a writable / is a bind and needs no remount", () => {
  const a = args({ mounts: [{ ...root, access: "write" }] });
  assert.ok(indexOfSeq(a, "--bind", "/", "/") > 0);
  assert.ok(!a.includes("--remount-ro"));
  assert.ok(indexOfSeq(a, "--bind", "/", "/") < a.indexOf("--dev"));
});

Deno.test("bwrapArgs: without the real root an alias becomes a symlink", () => {
  const linked: SandboxMount = {
    path: "/srv/real",
    alias: "/srv/link",
    access: "write",
    isDirectory: true,
  };
  const a = args({ mounts: [linked], cwd: "/srv/real" });
  const bind = indexOfSeq(a, "--bind", "/srv/real", "/srv/real");
  const symlink = indexOfSeq(a, "--symlink", "/srv/real", "/srv/link");
  assert.ok(bind > 0 && symlink > bind, a.join(" "));
  assert.ok(symlink < a.lastIndexOf("--remount-ro"));
});

Deno.test("bwrapArgs: no symlink for an alias under a readable root or a denied rule", () => {
  const linked: SandboxMount = {
    path: "/srv/real",
    alias: "/srv/link",
    access: "write",
    isDirectory: true,
  };
  assert.ok(!args({ mounts: [root, linked] }).includes("--symlink"));
  assert.ok(!args({ mounts: [{ ...linked, access: "deny" }] }).includes("--symlink"));
});

Deno.test("bwrapArgs: rules under /dev and /proc are not mounted", () => {
  const a = args({
    mounts: [
      root,
      { path: "/dev/shm", access: "write", isDirectory: true },
      { path: "/proc/self", access: "deny", isDirectory: true },
      { path: "/dev", access: "deny", isDirectory: true },
      { path: "/devices", access: "write", isDirectory: true },
    ],
    cwd: "/",
  });
  assert.ok(!a.includes("/dev/shm"));
  assert.ok(!a.includes("/proc/self"));
  assert.ok(!a.includes("--tmpfs"));
  assert.deepEqual(a.filter((x) => x === "/dev"), ["/dev"], "only the fresh --dev /dev");
  assert.ok(indexOfSeq(a, "--bind", "/devices", "/devices") > 0, "a sibling prefix is mounted");
});

Deno.test("bwrapArgs: --argv0 only when argv0 is given, just before --chdir", () => {
  for (const argv0 of [undefined, null, ""]) assert.ok(!args({ argv0 }).includes("--argv0"));
  assert.deepEqual(args({ argv0: "sh" }).slice(-4), ["--argv0", "sh", "--chdir", "/work"]);
});

Deno.test("bwrapArgs: --chdir cwd comes last", () => {
  for (
    const options of [
      { cwd: "/work/src" },
      { mounts: [work], cwd: "/work/src" },
      { argv0: "x", tty: true, network: true, cwd: "/work/src" },
    ]
  ) {
    const a = args(options);
    assert.deepEqual(a.slice(-2), ["--chdir", "/work/src"]);
    assert.equal(a.indexOf("--chdir"), a.length - 2);
  }
});
