import assert from "node:assert/strict";
import { optionalInt, PathResolver, requiredString } from "./tool_args.ts";
import { parseLoginProbe } from "./login_shell.ts";

Deno.test("tool args: each reader names the argument and the bad value", () => {
  assert.equal(optionalInt({ n: "12" }, "n", 0), 12);
  assert.equal(optionalInt({}, "n", 0), undefined);
  assert.throws(
    () => optionalInt({ n: 1.5 }, "n", 0),
    /n must be a whole number at least 0, got 1\.5/,
  );
  assert.throws(() => optionalInt({ n: 9 }, "n", 1, 5), /from 1 to 5, got 9/);
  assert.throws(() => requiredString({ s: 3 }, "s"), /s must be a string, got 3/);
});

Deno.test("PathResolver: absolute paths only, or relative to the root", () => {
  const none = new PathResolver();
  assert.equal(none.resolvePath("/a/../b/./c", "path"), "/b/c");
  assert.throws(
    () => none.resolvePath("x", "path"),
    /absolute path, got "x" \(this server has no --root\)/,
  );
  assert.throws(() => none.resolvePath("~/x", "path"), /~ is not expanded/);
  const root = new PathResolver("/srv/app/");
  assert.equal(root.resolvePath("src/a.ts", "path"), "/srv/app/src/a.ts");
  assert.equal(root.resolvePath("../etc", "path"), "/srv/etc");
  assert.throws(() => root.resolvePath("", "path"), /must not be empty/);
});

Deno.test("parseLoginProbe: the passwd entry's home and shell, with fallbacks", () => {
  assert.deepEqual(parseLoginProbe("ann\nann:x:1:1::/home/ann:/usr/bin/zsh\n/h\n"), {
    user: "ann",
    home: "/home/ann",
    shell: "/usr/bin/zsh",
  });
  // nologin, an unknown shell, or no entry: /bin/sh, and $HOME for the home.
  assert.equal(parseLoginProbe("svc\nsvc:x:1:1::/var/svc:/usr/sbin/nologin\n").shell, "/bin/sh");
  assert.deepEqual(parseLoginProbe("u\n\n/home/u\n"), {
    user: "u",
    home: "/home/u",
    shell: "/bin/sh",
  });
});
