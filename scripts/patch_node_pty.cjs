// Runs after `npm ci`/`npm install` (package.json "postinstall").
//
// node-pty 1.1.0 leaves every PTY master it creates inheritable, so each
// child the server starts later (pipe or PTY) holds the masters of all
// other open terminals: it could read and write them, and a terminal stays
// allocated until every such child has exited. Neither Deno nor Node can
// set FD_CLOEXEC from JavaScript, so this patches node-pty's source to set
// it right after the master is created, adds the calls the runtimes
// lack (see ADDED), and rebuilds the addon (node-pty is compiled from
// source on Linux anyway). It is idempotent, and a missing node-pty (an
// optional dependency) is not an error.
"use strict";
const { spawnSync } = require("node:child_process");
const { existsSync, readFileSync, statSync, writeFileSync } = require("node:fs");
const { dirname, join } = require("node:path");

const MARK = "/* exec-server: master close-on-exec */";
const WRITE_MARK = "/* exec-server: non-blocking write */";
const PIPE_SIZE_MARK = "/* exec-server: pipe size */";
const WRITE_BEHIND_MARK = "/* exec-server: write behind */";

// Functions added to the addon: calls the runtime cannot make itself.
const ADDED = [
  {
    // A write(2) that the runtime cannot do itself: Deno refuses fs writes
    // to descriptors it did not open (EBADF), and its socket over the
    // master stalled for good once the terminal was full (a 50 KB paste
    // stopped after ~16 KB). One non-blocking write; the caller retries on
    // -EAGAIN.
    mark: WRITE_MARK,
    name: "write",
    native: "PtyWrite",
    text: `${WRITE_MARK}
static Napi::Value PtyWrite(const Napi::CallbackInfo& info) {
  Napi::Env env(info.Env());
  if (info.Length() != 2 || !info[0].IsNumber() || !info[1].IsTypedArray()) {
    throw Napi::Error::New(env, "Usage: pty.write(fd, bytes)");
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  Napi::Uint8Array data = info[1].As<Napi::Uint8Array>();
  ssize_t n;
  do {
    n = write(fd, data.Data(), data.ByteLength());
  } while (n < 0 && errno == EINTR);
  return Napi::Number::New(env, n < 0 ? -errno : static_cast<double>(n));
}

`,
  },
  {
    // fcntl(F_SETPIPE_SZ), which Node has no call for: the binary (Node)
    // asks for 1 MiB stdio pipes as the Deno server does through its FFI
    // (src/runtime/pipe_size.ts). The size granted, or a negative errno.
    mark: PIPE_SIZE_MARK,
    name: "setPipeSize",
    native: "PtySetPipeSize",
    text: `${PIPE_SIZE_MARK}
static Napi::Value PtySetPipeSize(const Napi::CallbackInfo& info) {
  Napi::Env env(info.Env());
  if (info.Length() != 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    throw Napi::Error::New(env, "Usage: pty.setPipeSize(fd, bytes)");
  }
#ifdef F_SETPIPE_SZ
  int fd = info[0].As<Napi::Number>().Int32Value();
  int bytes = info[1].As<Napi::Number>().Int32Value();
  int n = fcntl(fd, F_SETPIPE_SZ, bytes);
  return Napi::Number::New(env, n < 0 ? -errno : n);
#else
  return Napi::Number::New(env, -ENOSYS);
#endif
}

`,
  },
  {
    // sync_file_range(SYNC_FILE_RANGE_WRITE) and posix_fadvise(DONTNEED),
    // which Node has no calls for, on libuv's thread pool (starting
    // writeback may wait for the disk's queue): write-behind for large
    // uploads, as the Deno server does through its FFI
    // (src/runtime/write_behind.ts). A promise of 0, or a negative errno.
    mark: WRITE_BEHIND_MARK,
    name: "writeBehind",
    native: "PtyWriteBehind",
    text: `${WRITE_BEHIND_MARK}
class WriteBehindWorker : public Napi::AsyncWorker {
 public:
  WriteBehindWorker(Napi::Env env, int fd, int64_t offset, int64_t length,
                    int64_t drop_offset, int64_t drop_length)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)),
        fd_(fd), offset_(offset), length_(length),
        drop_offset_(drop_offset), drop_length_(drop_length) {}
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override {
#if defined(__linux__)
    if (length_ > 0 &&
        sync_file_range(fd_, offset_, length_, SYNC_FILE_RANGE_WRITE) != 0) {
      result_ = -errno;
      return;
    }
    if (drop_length_ > 0) {
      int err = posix_fadvise(fd_, drop_offset_, drop_length_, POSIX_FADV_DONTNEED);
      if (err != 0) result_ = -err;
    }
#else
    result_ = -ENOSYS;
#endif
  }
  void OnOK() override { deferred_.Resolve(Napi::Number::New(Env(), result_)); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  int fd_;
  int64_t offset_, length_, drop_offset_, drop_length_;
  int result_ = 0;
};

static Napi::Value PtyWriteBehind(const Napi::CallbackInfo& info) {
  Napi::Env env(info.Env());
  if (info.Length() != 5) {
    throw Napi::Error::New(env, "Usage: pty.writeBehind(fd, offset, length, dropOffset, dropLength)");
  }
  for (size_t i = 0; i < 5; i++) {
    if (!info[i].IsNumber()) {
      throw Napi::Error::New(env, "Usage: pty.writeBehind(fd, offset, length, dropOffset, dropLength)");
    }
  }
  auto* worker = new WriteBehindWorker(env, info[0].As<Napi::Number>().Int32Value(),
      info[1].As<Napi::Number>().Int64Value(), info[2].As<Napi::Number>().Int64Value(),
      info[3].As<Napi::Number>().Int64Value(), info[4].As<Napi::Number>().Int64Value());
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

`,
  },
];

function main() {
  let root;
  try {
    root = dirname(require.resolve("node-pty/package.json", { paths: [join(__dirname, "..")] }));
  } catch {
    console.error("patch_node_pty: node-pty is not installed; nothing to patch");
    return 0;
  }
  const source = join(root, "src/unix/pty.cc");
  const addon = join(root, "build/Release/pty.node");
  // A patched source alone does not mean the addon was built from it; an
  // addon newer than the patched source was. (node-pty's own install may
  // run after this script and rebuild from the patched source: also fine.)
  const text = readFileSync(source, "utf8");
  if (
    text.includes(MARK) && ADDED.every((f) => text.includes(f.mark)) && existsSync(addon) &&
    statSync(addon).mtimeMs >= statSync(source).mtimeMs
  ) {
    return 0;
  }
  if (!ADDED.every((f) => patchFunction(source, f)) || !patchCloexec(source)) return 1;
  // npm puts its own node-gyp on PATH for lifecycle scripts and names it in
  // npm_config_node_gyp.
  const gyp = process.env.npm_config_node_gyp;
  const cmd = gyp ? process.execPath : "node-gyp";
  const args = gyp ? [gyp, "rebuild"] : ["rebuild"];
  const res = spawnSync(cmd, args, { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  if (res.status !== 0 || !existsSync(addon)) {
    console.error(
      `patch_node_pty: rebuilding node-pty failed (${res.error ?? `exit ${res.status}`})`,
    );
    return 1;
  }
  console.error(`patch_node_pty: rebuilt ${addon}`);
  return 0;
}

/** Add one of ADDED to the source and export it, once. False when node-pty changed. */
function patchFunction(source, added) {
  const text = readFileSync(source, "utf8");
  if (text.includes(added.mark)) return true;
  const init = "Napi::Object init(Napi::Env env, Napi::Object exports) {\n";
  const exportsLine = '  exports.Set("resize",  Napi::Function::New(env, PtyResize));\n';
  if (!text.includes(init) || !text.includes(exportsLine)) {
    console.error(`patch_node_pty: ${source} has no init() as expected; node-pty changed`);
    return false;
  }
  const line = `  exports.Set("${added.name}", Napi::Function::New(env, ${added.native}));\n`;
  writeFileSync(
    source,
    text.replace(init, added.text + init).replace(exportsLine, exportsLine + line),
  );
  console.error(`patch_node_pty: added ${added.name} to ${source}`);
  return true;
}

/** Mark every master close-on-exec, once. False when node-pty changed. */
function patchCloexec(source) {
  const text = readFileSync(source, "utf8");
  if (text.includes(MARK)) return true;
  const needle = "pty_nonblock(master) == -1";
  const count = text.split(needle).length - 1;
  if (count === 0) {
    console.error(`patch_node_pty: ${source} has no "${needle}"; node-pty changed, not patched`);
    return false;
  }
  const patched = text.replaceAll(
    needle,
    `(pty_nonblock(master) == -1 || fcntl(master, F_SETFD, FD_CLOEXEC) == -1 ${MARK})`,
  );
  writeFileSync(source, patched);
  console.error(`patch_node_pty: set FD_CLOEXEC on the master at ${count} places in ${source}`);
  return true;
}

// --soft (the npm package's postinstall): a failure is a warning, so that
// installing the library never fails on it; PTY masters then stay
// inheritable, as in node-pty itself.
const soft = process.argv.includes("--soft");
const code = main();
if (code !== 0 && soft) {
  console.error("patch_node_pty: warning: node-pty was not patched; see above");
}
process.exitCode = soft ? 0 : code;
