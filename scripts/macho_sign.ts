/**
 * Ad-hoc code signing of thin 64-bit Mach-O files in plain TypeScript.
 *
 * macOS on Apple Silicon kills arm64 code whose signature is missing or does
 * not match its pages; postject (LIEF) drops Node's signature, and Apple's
 * `codesign` does not run on the Linux build machine, so the build signs here.
 * Layout (Apple's `<mach-o/loader.h>`, xnu's `cs_blobs.h`): LC_CODE_SIGNATURE
 * points at a big-endian SuperBlob at the end of __LINKEDIT, whose
 * CodeDirectory hashes every 4 KiB page of the file before it.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";

const MH_MAGIC_64 = 0xfeedfacf, MH_EXECUTE = 2, LC_SEGMENT_64 = 0x19, LC_CODE_SIGNATURE = 0x1d;
const CPU_NAMES: Record<number, string> = { 0x01000007: "x86_64", 0x0100000c: "arm64" };
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0, CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CSSLOT_CODEDIRECTORY = 0, CSSLOT_REQUIREMENTS = 2;
/** Slots of blobs kept inside the superblob (requirements, entitlements), so checkable here. */
const BLOB_SLOTS = [CSSLOT_REQUIREMENTS, 5, 7];
const CS_ADHOC = 0x2, CS_EXECSEG_MAIN_BINARY = 0x1, PAGE_BITS = 12, PAGE = 1 << PAGE_BITS;
/** A version 0x20400 CodeDirectory header ends after execSegFlags, at byte 88. */
const CD_VERSION = 0x20400, CD_HEADER = 88;
/** Slot -1 (Info.plist, zero: a bare executable has none) and slot -2 (requirements). */
const SPECIAL_SLOTS = CSSLOT_REQUIREMENTS;
/** arm64 maps 16 KiB pages; Apple's x86_64 Node also rounds __LINKEDIT's vmsize to 16 KiB. */
const VM_ROUND = 0x4000;
/** Apple's tools start (and size) the signature in 16-byte units, as in Node's binaries. */
const SIG_ALIGN = 16;
/** Hash types (algorithm, bytes kept): SHA-1, SHA-256, SHA-256 truncated, SHA-384. */
type HashType = [string, number];
const HASHES: HashType[] = [["", 0], ["sha1", 20], ["sha256", 32], ["sha256", 20], ["sha384", 48]];
type Range = [at: number, count: number, unit: number];
const DYLD_INFO: Range[] = [8, 16, 24, 32, 40].map((o) => [o, o + 4, 1]);
/**
 * Load commands' (offset, count, unit) fields that point at __LINKEDIT data:
 * signing cuts the file after the signature, so none of it may lie beyond.
 * LC_SYMTAB (symbols, strings), LC_DYSYMTAB (indirect symbols), LC_DYLD_INFO
 * (rebase, bind, weak, lazy, export) and linkedit_data_command (split info,
 * function starts, data in code, DRs, hints, exports trie, fixups, atom info).
 */
const LINKEDIT_DATA = new Map<number, Range[]>([[0x2, [[8, 12, 16], [16, 20, 1]]]]);
LINKEDIT_DATA.set(0xb, [[56, 60, 4]]).set(0x22, DYLD_INFO).set(0x80000022, DYLD_INFO);
const LINKEDIT_DATA_CMDS = [0x1e, 0x26, 0x29, 0x2b, 0x2e, 0x80000033, 0x80000034, 0x36];
for (const c of LINKEDIT_DATA_CMDS) LINKEDIT_DATA.set(c, [[8, 12, 1]]);

type Segment = { name: string; cmdAt: number; vmaddr: number; fileoff: number; filesize: number };
type Layout = {
  filetype: number;
  /** End of the load commands (where a new one would go) and start of the first content. */
  headerEnd: number;
  firstContent: number;
  segments: Segment[];
  codeSig?: { cmdOffset: number; dataoff: number; datasize: number };
  /** End of the furthest __LINKEDIT data other than the code signature. */
  dataEnd: number;
};

/** Where LC_CODE_SIGNATURE points, and the blobs of its superblob. */
export type CodeSignatureInfo = {
  /** File offsets: the load command, and the data it points at (dataoff, datasize). */
  commandOffset: number;
  dataoff: number;
  datasize: number;
  superBlobLength: number;
  /** Index entries: slot type, offset inside the superblob, blob magic and length. */
  blobs: Array<{ slot: number; offset: number; magic: number; length: number }>;
  /** The CodeDirectory in slot 0 (alternate ones, slots 0x1000+, are only listed in blobs). */
  codeDirectory?: CodeDirectoryInfo;
};

/**
 * The fields of one CodeDirectory blob, named as in xnu's `cs_blobs.h`
 * (`pageSizeLog2` is its `pageSize`; fields newer than the blob's version are 0;
 * `runtime` is the hardened-runtime version). Hashes are lowercase hex;
 * `specialSlotHashes` is keyed by the slot number without its minus sign
 * (1 = Info.plist, 2 = requirements, 5 = entitlements).
 */
export type CodeDirectoryInfo =
  & Record<"version" | "flags" | "hashOffset" | "identOffset" | "nSpecialSlots", number>
  & Record<"nCodeSlots" | "codeLimit" | "hashSize" | "hashType" | "platform", number>
  & Record<"pageSizeLog2" | "teamOffset" | "runtime", number>
  & Record<"execSegBase" | "execSegLimit" | "execSegFlags", number>
  & { identifier: string; teamId?: string }
  & { specialSlotHashes: Map<number, string>; codeSlotHashes: string[] };

const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
const hex = (n: number): string => `0x${n.toString(16)}`;
const align = (n: number, to: number): number => Math.ceil(n / to) * to;
const toHex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const digest = ([alg, size]: HashType, data: Uint8Array): Uint8Array =>
  new Uint8Array(createHash(alg).update(data).digest().subarray(0, size));
/** An empty requirement set (count 0): what `codesign -s -` embeds for ad-hoc code. */
const EMPTY_REQUIREMENTS = new Uint8Array([0xfa, 0xde, 0x0c, 0x01, 0, 0, 0, 12, 0, 0, 0, 0]);
/** Our superblob holds a CodeDirectory and the requirements: header, 2 index entries, blob. */
const SUPERBLOB_EXTRA = 12 + 2 * 8 + EMPTY_REQUIREMENTS.length;

function cString(b: Uint8Array, at: number): string {
  const end = b.indexOf(0, at);
  if (end < 0) throw new Error(`unterminated string at ${at} in the code signature`);
  return new TextDecoder().decode(b.subarray(at, end));
}

/** Refuses anything but a thin little-endian 64-bit x86_64/arm64 Mach-O, naming what it got. */
function checkMagic(bin: Uint8Array): void {
  if (bin.length < 32) throw new Error(`not a Mach-O file: only ${bin.length} bytes`);
  const le = view(bin).getUint32(0, true), be = view(bin).getUint32(0, false);
  const fat = `universal (fat) Mach-O with ${view(bin).getUint32(4)} architectures`;
  if (be === 0xcafebabe || be === 0xcafebabf) throw new Error(`${fat}; sign a thin slice instead`);
  if (le === 0xfeedface) throw new Error("32-bit Mach-O (MH_MAGIC); only 64-bit is supported");
  if (be === 0xfeedface || be === MH_MAGIC_64) throw new Error("big-endian Mach-O; unsupported");
  if (be === 0x7f454c46) throw new Error("ELF file, not Mach-O (a Linux or BSD binary?)");
  if (le !== MH_MAGIC_64) throw new Error(`not a Mach-O file (magic ${hex(le)})`);
  const cpu = view(bin).getUint32(4, true);
  if (!CPU_NAMES[cpu]) throw new Error(`unsupported CPU type ${hex(cpu)}: only x86_64 and arm64`);
}

function readSegment(v: DataView, off: number, size: number, layout: Layout): void {
  // segname is NUL-padded to 16 bytes, not always NUL-terminated.
  const name = Buffer.from(v.buffer, v.byteOffset + off + 8, 16).toString().replace(/\0.*/s, "");
  const u64 = (at: number): number => Number(v.getBigUint64(off + at, true));
  const seg = { name, cmdAt: off, vmaddr: u64(24), fileoff: u64(40), filesize: u64(48) };
  layout.segments.push(seg);
  const starts = seg.fileoff > 0 && seg.filesize > 0 ? [seg.fileoff] : [];
  const nsects = v.getUint32(off + 64, true);
  if (72 + nsects * 80 > size) throw new Error(`segment ${name} lists more sections than fit`);
  for (let i = 0, s = off + 72; i < nsects; i++, s += 80) {
    const offset = v.getUint32(s + 48, true), type = v.getUint32(s + 64, true) & 0xff;
    // Zero-fill sections (S_ZEROFILL, S_GB_ZEROFILL, S_THREAD_LOCAL_ZEROFILL) own no file bytes.
    if (offset > 0 && ![0x1, 0xc, 0x12].includes(type)) starts.push(offset);
  }
  layout.firstContent = Math.min(layout.firstContent, ...starts);
}

/** Reads the header and load commands of a thin 64-bit Mach-O. */
function readLayout(bin: Uint8Array): Layout {
  checkMagic(bin);
  const v = view(bin);
  const ncmds = v.getUint32(16, true), headerEnd = 32 + v.getUint32(20, true); // + sizeofcmds
  if (headerEnd > bin.length) throw new Error("load commands run past the end of the file");
  const base = { filetype: v.getUint32(12, true), headerEnd, firstContent: bin.length };
  const layout: Layout = { ...base, segments: [], dataEnd: 0 };
  for (let i = 0, off = 32; i < ncmds; i++) {
    const cmd = v.getUint32(off, true), size = v.getUint32(off + 4, true);
    if (size < 8 || off + size > headerEnd) throw new Error(`load command ${i} is malformed`);
    if (cmd === LC_SEGMENT_64) readSegment(v, off, size, layout);
    if (cmd === LC_CODE_SIGNATURE) {
      const dataoff = v.getUint32(off + 8, true), datasize = v.getUint32(off + 12, true);
      layout.codeSig = { cmdOffset: off, dataoff, datasize };
    }
    for (const [at, count, unit] of LINKEDIT_DATA.get(cmd) ?? []) {
      const n = v.getUint32(off + count, true);
      if (n > 0) layout.dataEnd = Math.max(layout.dataEnd, v.getUint32(off + at, true) + n * unit);
    }
    off += size;
  }
  return layout;
}

function segment(layout: Layout, name: string): Segment {
  const seg = layout.segments.find((s) => s.name === name);
  if (!seg) throw new Error(`no ${name} segment`);
  return seg;
}

function cdLength(identLength: number, codeLimit: number): number {
  return CD_HEADER + identLength + 1 + (SPECIAL_SLOTS + Math.ceil(codeLimit / PAGE)) * 32;
}

/** Builds an ad-hoc CodeDirectory over `code` (the file up to the signature). */
function buildCodeDirectory(code: Uint8Array, ident: Uint8Array, execSeg: number[]): Uint8Array {
  const nCode = Math.ceil(code.length / PAGE);
  const hashOffset = CD_HEADER + ident.length + 1 + SPECIAL_SLOTS * 32;
  const cd = new Uint8Array(cdLength(ident.length, code.length));
  const v = view(cd);
  const head = [CSMAGIC_CODEDIRECTORY, cd.length, CD_VERSION, CS_ADHOC, hashOffset, CD_HEADER];
  [...head, SPECIAL_SLOTS, nCode, code.length].forEach((w, i) => v.setUint32(i * 4, w));
  cd.set([32, 2, 0, PAGE_BITS], 36); // hashSize, hashType SHA-256, platform, log2(page size)
  // spare2, scatterOffset, teamOffset, spare3 and codeLimit64 (bytes 40..63) stay zero.
  execSeg.forEach((x, i) => v.setBigUint64(64 + i * 8, BigInt(x))); // base, limit, flags
  cd.set(ident, CD_HEADER);
  // Special slots sit backwards from hashOffset; slot -1 (Info.plist) stays zero.
  cd.set(digest(HASHES[2], EMPTY_REQUIREMENTS), hashOffset - CSSLOT_REQUIREMENTS * 32);
  for (let i = 0; i < nCode; i++) {
    const page = code.subarray(i * PAGE, Math.min((i + 1) * PAGE, code.length));
    cd.set(digest(HASHES[2], page), hashOffset + i * 32);
  }
  return cd;
}

function buildSuperBlob(cd: Uint8Array): Uint8Array {
  const out = new Uint8Array(SUPERBLOB_EXTRA + cd.length);
  const reqAt = 28 + cd.length;
  const words = [CSMAGIC_EMBEDDED_SIGNATURE, out.length, 2, CSSLOT_CODEDIRECTORY, 28];
  [...words, CSSLOT_REQUIREMENTS, reqAt].forEach((w, i) => view(out).setUint32(i * 4, w));
  out.set(cd, 28);
  out.set(EMPTY_REQUIREMENTS, reqAt);
  return out;
}

/** Decides where the signature goes, failing when the file cannot take one safely. */
function placeSignature(bin: Uint8Array, layout: Layout, linkedit: Segment): number {
  const linkeditEnd = linkedit.fileoff + linkedit.filesize;
  const others = layout.segments.filter((s) => s !== linkedit && s.filesize > 0);
  const lastOther = Math.max(0, ...others.map((s) => s.fileoff + s.filesize));
  if (layout.codeSig) {
    const { dataoff } = layout.codeSig;
    if (dataoff < linkedit.fileoff || dataoff > Math.min(linkeditEnd, bin.length)) {
      throw new Error(`LC_CODE_SIGNATURE dataoff ${hex(dataoff)} lies outside __LINKEDIT`);
    }
    if (lastOther > dataoff || layout.dataEnd > dataoff) {
      throw new Error("data follows the old code signature; it is not last in the file");
    }
    return dataoff;
  }
  if (linkeditEnd !== bin.length || lastOther > linkedit.fileoff) {
    const what = `__LINKEDIT (ending at ${linkeditEnd})`;
    throw new Error(`${what} is not the last segment of the ${bin.length}-byte file`);
  }
  if (layout.headerEnd + 16 > layout.firstContent) {
    const room = `load commands end at ${layout.headerEnd}, content at ${layout.firstContent}`;
    throw new Error(`no room in the header for LC_CODE_SIGNATURE (16 bytes): ${room}`);
  }
  if (bin.subarray(layout.headerEnd, layout.headerEnd + 16).some((b) => b !== 0)) {
    throw new Error("the header padding after the load commands is not zero; refusing to use it");
  }
  return align(linkeditEnd, SIG_ALIGN);
}

/**
 * Returns a copy of a thin 64-bit Mach-O (x86_64 or arm64) carrying a fresh
 * ad-hoc signature: a CodeDirectory (SHA-256 of each 4 KiB page, flags
 * CS_ADHOC, no team) and an empty requirement set, and no CMS blob. An
 * existing signature (e.g. Developer ID, with its large CMS blob) is replaced
 * at its dataoff and the file is cut after the new one; without one,
 * LC_CODE_SIGNATURE is added in the header padding and the signature appended
 * to __LINKEDIT. __LINKEDIT's filesize and vmsize then end at the new EOF.
 * Like `codesign -s -`, it sets no hardened runtime, so code that JITs (Node)
 * needs none of the entitlements its Developer ID signature carried.
 *
 * @param binary the Mach-O file's bytes (not modified)
 * @param identifier the signing identifier, e.g. the program's name
 * @returns the signed file's bytes
 * @throws Error for fat, 32-bit or non-Mach-O input, or a layout that cannot take a signature
 */
export function adhocSign(binary: Uint8Array, identifier: string): Uint8Array {
  const ident = new TextEncoder().encode(identifier);
  if (ident.length === 0 || ident.includes(0)) {
    throw new Error("the identifier must be non-empty and contain no NUL");
  }
  const layout = readLayout(binary);
  const linkedit = segment(layout, "__LINKEDIT");
  const dataoff = placeSignature(binary, layout, linkedit);
  const datasize = align(SUPERBLOB_EXTRA + cdLength(ident.length, dataoff), SIG_ALIGN);
  const end = dataoff + datasize;
  if (end > 0xffffffff) throw new Error("files over 4 GiB need codeLimit64; unsupported");
  const filesize = end - linkedit.fileoff, vmsize = align(filesize, VM_ROUND);
  const vmEnd = linkedit.vmaddr + vmsize;
  if (layout.segments.some((s) => s.vmaddr > linkedit.vmaddr && s.vmaddr < vmEnd)) {
    throw new Error("__LINKEDIT would overlap a segment mapped after it");
  }
  const out = new Uint8Array(end);
  out.set(binary.subarray(0, Math.min(dataoff, binary.length)));
  const v = view(out);
  let cmdOffset = layout.codeSig?.cmdOffset;
  if (cmdOffset === undefined) {
    cmdOffset = layout.headerEnd;
    v.setUint32(16, v.getUint32(16, true) + 1, true); // ncmds
    v.setUint32(20, v.getUint32(20, true) + 16, true); // sizeofcmds
    v.setUint32(cmdOffset, LC_CODE_SIGNATURE, true);
    v.setUint32(cmdOffset + 4, 16, true);
  }
  v.setUint32(cmdOffset + 8, dataoff, true);
  v.setUint32(cmdOffset + 12, datasize, true);
  v.setBigUint64(linkedit.cmdAt + 32, BigInt(vmsize), true);
  v.setBigUint64(linkedit.cmdAt + 48, BigInt(filesize), true);
  // Hash only after the header edits: page 0 holds the header and is covered too.
  const cd = buildCodeDirectory(out.subarray(0, dataoff), ident, execSegment(layout));
  out.set(buildSuperBlob(cd), dataoff);
  return out;
}

/** execSegBase, execSegLimit, execSegFlags: __TEXT's file range, and whether it is a main binary. */
function execSegment(layout: Layout): number[] {
  const text = segment(layout, "__TEXT");
  const main = layout.filetype === MH_EXECUTE ? CS_EXECSEG_MAIN_BINARY : 0;
  return [text.fileoff, text.filesize, main];
}

/**
 * The CodeDirectory blob {@link adhocSign} would write for these exact bytes,
 * with the code limit at the existing signature's dataoff (or EOF when there
 * is none) and the header left as it is: comparing it with another signer's
 * CodeDirectory shows whether both hash the same pages the same way.
 *
 * @param binary the Mach-O file's bytes
 * @param identifier the signing identifier
 * @returns the CodeDirectory blob (see {@link parseCodeDirectory})
 */
export function codeDirectoryFor(binary: Uint8Array, identifier: string): Uint8Array {
  const layout = readLayout(binary);
  const code = binary.subarray(0, layout.codeSig?.dataoff ?? binary.length);
  return buildCodeDirectory(code, new TextEncoder().encode(identifier), execSegment(layout));
}

/**
 * Parses one CodeDirectory blob.
 *
 * @param cd the blob's bytes, starting at its magic
 * @returns its fields, identifier, team id and hashes
 */
export function parseCodeDirectory(cd: Uint8Array): CodeDirectoryInfo {
  const v = view(cd);
  if (cd.length < 44 || v.getUint32(0) !== CSMAGIC_CODEDIRECTORY) {
    throw new Error("no CodeDirectory");
  }
  const u32 = [8, 12, 16, 20, 24, 28, 32].map((at) => v.getUint32(at));
  const [version, flags, hashOffset, identOffset, nSpecialSlots, nCodeSlots, codeLimit] = u32;
  const [hashSize, hashType, platform, pageSizeLog2] = cd.subarray(36, 40);
  const since = (min: number, read: () => number | bigint): number =>
    version >= min ? Number(read()) : 0;
  const teamOffset = since(0x20200, () => v.getUint32(48));
  const execSeg = [64, 72, 80].map((at) => since(0x20400, () => v.getBigUint64(at)));
  const [execSegBase, execSegLimit, execSegFlags] = execSeg;
  const runtime = since(0x20500, () => v.getUint32(88));
  if (hashOffset + nCodeSlots * hashSize > cd.length || hashOffset < nSpecialSlots * hashSize) {
    throw new Error("CodeDirectory hash slots run outside the blob");
  }
  // Slot i's hash is at hashOffset + i * hashSize; special slots have negative i.
  const hashAt = (i: number): string =>
    toHex(cd.subarray(hashOffset + i * hashSize).subarray(0, hashSize));
  const specialSlotHashes = new Map<number, string>();
  for (let k = 1; k <= nSpecialSlots; k++) specialSlotHashes.set(k, hashAt(-k));
  const codeSlotHashes = Array.from({ length: nCodeSlots }, (_, i) => hashAt(i));
  const head = { version, flags, hashOffset, identOffset, nSpecialSlots, nCodeSlots, codeLimit };
  const sizes = { hashSize, hashType, platform, pageSizeLog2, teamOffset, runtime };
  const identifier = cString(cd, identOffset);
  const teamId = teamOffset ? cString(cd, teamOffset) : undefined;
  const hashes = { identifier, teamId, specialSlotHashes, codeSlotHashes };
  return { ...head, ...sizes, execSegBase, execSegLimit, execSegFlags, ...hashes };
}

/**
 * Finds LC_CODE_SIGNATURE and parses the superblob it points at.
 *
 * @param binary a thin 64-bit Mach-O file
 * @returns the signature's location, blobs and CodeDirectories, or undefined when unsigned
 * @throws Error when the file is not a supported Mach-O or the superblob is malformed
 */
export function parseCodeSignature(binary: Uint8Array): CodeSignatureInfo | undefined {
  const sig = readLayout(binary).codeSig;
  if (!sig) return undefined;
  const { dataoff, datasize } = sig;
  if (dataoff + datasize > binary.length) throw new Error("the code signature runs past EOF");
  const sb = binary.subarray(dataoff, dataoff + datasize), v = view(sb);
  if (datasize < 12 || v.getUint32(0) !== CSMAGIC_EMBEDDED_SIGNATURE) {
    throw new Error("LC_CODE_SIGNATURE does not point at an embedded-signature superblob");
  }
  const length = v.getUint32(4), count = v.getUint32(8);
  if (length > datasize || 12 + count * 8 > length) throw new Error("superblob length is invalid");
  const where = { commandOffset: sig.cmdOffset, dataoff, datasize, superBlobLength: length };
  const info: CodeSignatureInfo = { ...where, blobs: [] };
  for (let i = 0; i < count; i++) {
    const slot = v.getUint32(12 + i * 8), offset = v.getUint32(16 + i * 8);
    const blobLength = offset + 8 <= length ? v.getUint32(offset + 4) : Infinity;
    if (offset + blobLength > length) throw new Error(`blob in slot ${hex(slot)} overruns`);
    info.blobs.push({ slot, offset, magic: v.getUint32(offset), length: blobLength });
    if (slot === CSSLOT_CODEDIRECTORY) {
      info.codeDirectory = parseCodeDirectory(sb.subarray(offset, offset + blobLength));
    }
  }
  return info;
}

/** Recomputes one CodeDirectory's code-page and in-superblob special-slot hashes. */
function checkCodeDirectory(
  bin: Uint8Array,
  sig: CodeSignatureInfo,
  cd: CodeDirectoryInfo,
): string[] {
  const hash = HASHES[cd.hashType];
  if (!hash?.[0] || hash[1] !== cd.hashSize) return [`hash type ${cd.hashType} unsupported`];
  const problems: string[] = [];
  if (cd.codeLimit !== sig.dataoff) {
    problems.push(`codeLimit ${cd.codeLimit} is not the signature's dataoff ${sig.dataoff}`);
  }
  const page = cd.pageSizeLog2 ? 2 ** cd.pageSizeLog2 : cd.codeLimit;
  if (cd.nCodeSlots !== Math.ceil(cd.codeLimit / page)) {
    problems.push(`nCodeSlots ${cd.nCodeSlots} does not cover codeLimit ${cd.codeLimit}`);
  }
  const bad = cd.codeSlotHashes.flatMap((want, i) => {
    const data = bin.subarray(i * page, Math.min((i + 1) * page, cd.codeLimit));
    return toHex(digest(hash, data)) === want ? [] : [i];
  });
  if (bad.length) problems.push(`${bad.length} code page hash(es) differ, first: ${bad[0]}`);
  const sb = bin.subarray(sig.dataoff, sig.dataoff + sig.superBlobLength);
  for (const slot of BLOB_SLOTS.filter((s) => s <= cd.nSpecialSlots)) {
    const blob = sig.blobs.find((b) => b.slot === slot);
    const want = blob
      ? toHex(digest(hash, sb.subarray(blob.offset, blob.offset + blob.length)))
      : "00".repeat(cd.hashSize);
    if (cd.specialSlotHashes.get(slot) !== want) {
      problems.push(`special slot -${slot} does not hash ${blob ? "its blob" : "to zero"}`);
    }
  }
  return problems;
}

/**
 * Checks a signed Mach-O as the kernel sees its pages: recomputes every
 * code-page hash of the CodeDirectory and the special-slot hashes of blobs in
 * the superblob (requirements, entitlements); checks that the signature lies
 * within __LINKEDIT, that __LINKEDIT ends at EOF and that the executable
 * segment matches __TEXT. It cannot judge a CMS signature or Apple's policy.
 *
 * @param binary a thin 64-bit Mach-O file
 * @returns ok when no problem was found, else the problems
 */
export function verifyCodeSignature(binary: Uint8Array): { ok: boolean; problems: string[] } {
  const problems: string[] = [];
  try {
    const layout = readLayout(binary);
    const sig = parseCodeSignature(binary);
    if (!sig) return { ok: false, problems: ["no LC_CODE_SIGNATURE load command"] };
    const linkedit = segment(layout, "__LINKEDIT");
    const linkeditEnd = linkedit.fileoff + linkedit.filesize;
    if (sig.dataoff < linkedit.fileoff || sig.dataoff + sig.datasize > linkeditEnd) {
      problems.push("the code signature does not lie within __LINKEDIT");
    }
    if (linkeditEnd !== binary.length) {
      problems.push(`__LINKEDIT ends at ${linkeditEnd}, the file at ${binary.length}`);
    }
    if (sig.blobs.some((b) => b.slot >= 0x1000 && b.slot < 0x1005)) {
      problems.push("alternate CodeDirectories (slots 0x1000+) are not checked here");
    }
    const cd = sig.codeDirectory;
    if (!cd) return { ok: false, problems: [...problems, "no CodeDirectory in slot 0"] };
    problems.push(...checkCodeDirectory(binary, sig, cd));
    const [base, limit] = execSegment(layout);
    if (cd.version >= 0x20400 && (cd.execSegBase !== base || cd.execSegLimit !== limit)) {
      problems.push("execSegBase/execSegLimit do not match __TEXT");
    }
  } catch (err) {
    problems.push((err as Error).message);
  }
  return { ok: problems.length === 0, problems };
}
