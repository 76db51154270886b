/**
 * The way in to a session that another server of the same user holds: a
 * stdio server whose client resumes a session it does not know connects to
 * that session's socket (session_dir.ts), proves it is the same user with
 * the directory's secret, and from then on passes the client's frames on
 * one by one and the holder's output back as bytes, as they come, so the
 * client speaks to the holding server as if directly. A frame the client's
 * side refuses (too large, not UTF-8) is told to the holder in a link line
 * of its own ({@linkcode refusedLine}), which answers it in its place in
 * the stream.
 *
 * The link's first line each way (JSON, then `\n`):
 * `{"execServerLink":{"version":V,"secret":S}}` from the connecting server;
 * `{"execServerLink":{"ok":true}}` or `{"execServerLink":{"error":"..."}}`
 * from the holder, which refuses a secret or a version other than its own.
 *
 * @module
 */
import { BinaryFrame, type FrameConnection, type IncomingFrame } from "../rpc/connection.ts";
import { ErrorCode } from "../protocol/errors.ts";
import { connectUnix } from "../runtime/unix_socket.ts";
import { FrameWriter } from "../transport/frame_writer.ts";
import { concatBytes } from "../util/bytes.ts";
import { VERSION } from "../version.ts";
import { readSessionSecret, sessionSocketPath } from "./session_dir.ts";

/** The error that answers a frame its transport refused, as `{code, message}`. */
export function refusedFrameError(
  frame: Exclude<IncomingFrame, { kind: "text" }>,
): { code: number; message: string } {
  return frame.kind === "tooLarge"
    ? {
      code: ErrorCode.InvalidRequest,
      message:
        `message too large: ${frame.bytes} bytes exceeds the limit of ${frame.limit} bytes ` +
        `(--max-message-bytes)`,
    }
    : {
      code: ErrorCode.ParseError,
      message: `parse error: a ${frame.bytes}-byte message is not valid UTF-8`,
    };
}

/** The largest frame passed on a link: whatever either end may send. */
export const LINK_MAX_MESSAGE_BYTES = 2 ** 31 - 1;

/** A link's first line, as the connecting server writes it. */
export function linkHello(secret: string): string {
  return JSON.stringify({ execServerLink: { version: VERSION, secret } });
}

/** The holder's answer to a hello: accepted, or why not. */
export function linkAnswer(error?: string): string {
  return JSON.stringify({ execServerLink: error === undefined ? { ok: true } : { error } });
}

/** An open link to the server that holds a session. */
export interface SessionLink {
  /** Frames to the holder. */
  toHolder: FrameWriter;
  /**
   * The holder's next bytes of output (whole frames in the stdio wire
   * format, cut anywhere), or undefined at its end. Valid until the next read.
   */
  read: () => Promise<Uint8Array | undefined>;
  /** What was read past the holder's answer to the hello. */
  leftover: Uint8Array;
  /** Drop the link. */
  destroy(): void;
}

/** Why a held session could not be reached (the client is told this). */
export class LinkRefusedError extends Error {
  override name = "LinkRefusedError";
}

/**
 * Open a link to the server holding session `id`, if one does.
 *
 * @returns undefined when no server of this user holds it
 * @throws {LinkRefusedError} when one does but refused the link
 */
export async function openSessionLink(
  dir: string,
  id: string,
  highWaterBytes?: number,
): Promise<SessionLink | undefined> {
  let stream;
  let secret;
  try {
    // Nothing in the directory is trusted before it is known to be this
    // user's alone: another user could have made it and listen in it.
    secret = await readSessionSecret(dir);
    stream = await connectUnix(await sessionSocketPath(dir, id));
  } catch {
    // No private directory, no socket, or one whose server is gone:
    // nobody of this user holds the session.
    return undefined;
  }
  const toHolder = new FrameWriter(stream.writable, { highWaterBytes, reuseBuffer: true });
  const read = stream.read;
  toHolder.send(linkHello(secret));
  const [line, leftover] = await firstLine(read);
  const answer = line === undefined ? undefined : parseLink(line);
  if (answer?.ok === true) return { toHolder, read, leftover, destroy: stream.destroy };
  stream.destroy();
  throw new LinkRefusedError(
    typeof answer?.error === "string"
      ? answer.error
      : "the server holding it closed the link without an answer",
  );
}

/** Read up to the first newline: the line, and a copy of the bytes after it. */
async function firstLine(
  read: () => Promise<Uint8Array | undefined>,
): Promise<[string | undefined, Uint8Array]> {
  const parts: Uint8Array[] = [];
  let length = 0;
  while (length < 64 * 1024) {
    const value = await read();
    if (!value) return [undefined, new Uint8Array()];
    const nl = value.indexOf(0x0a);
    if (nl < 0) {
      parts.push(value.slice());
      length += value.byteLength;
      continue;
    }
    parts.push(value.subarray(0, nl));
    const text = new TextDecoder().decode(concatBytes(parts));
    return [text, value.slice(nl + 1)];
  }
  return [undefined, new Uint8Array()];
}

/**
 * A link line telling the holder that the client sent a frame this side
 * refused: the holder answers it as if its own transport had refused it.
 */
export function refusedLine(frame: Exclude<IncomingFrame, { kind: "text" }>): string {
  return JSON.stringify({ execServerLink: { refused: frame } });
}

/** The refused frame a {@linkcode refusedLine} tells of, if `text` is one. */
export function refusedFrame(text: string): Exclude<IncomingFrame, { kind: "text" }> | undefined {
  if (!text.startsWith('{"execServerLink":{"refused"')) return undefined;
  const refused = parseLink(text)?.refused as Record<string, unknown> | undefined;
  if (refused?.kind === "tooLarge") {
    return { kind: "tooLarge", bytes: Number(refused.bytes), limit: Number(refused.limit) };
  }
  if (refused?.kind === "badUtf8") return { kind: "badUtf8", bytes: Number(refused.bytes) };
  return undefined;
}

/** Where bytes that are whole frames go: a stdio connection's output. */
export interface ByteSink {
  /** Queue bytes; false above the high-water mark. */
  sendBytes(bytes: Uint8Array): boolean;
  /** Called whenever the queue drains. */
  onDrain(listener: () => void): void;
}

/** A wait for `to`'s next drain: what a pump awaits when `to` is congested. */
function drainWaiter(to: { onDrain(listener: () => void): void }): () => Promise<void> {
  let drained: (() => void) | undefined;
  to.onDrain(() => drained?.());
  return () => new Promise<void>((resolve) => drained = resolve).finally(() => drained = undefined);
}

/** Pass the holder's output on, as it comes, pausing while `to` is congested. */
export async function pumpBytes(link: SessionLink, to: ByteSink): Promise<void> {
  const drained = drainWaiter(to);
  let chunk: Uint8Array | undefined = link.leftover;
  while (true) {
    if (chunk && chunk.byteLength > 0 && !to.sendBytes(chunk)) await drained();
    chunk = await link.read();
    if (!chunk) return;
  }
}

/** The `execServerLink` member of a link's first line, if it is one. */
export function parseLink(text: string): Record<string, unknown> | undefined {
  try {
    const m = JSON.parse(text);
    const link = m?.execServerLink;
    return link && typeof link === "object" ? link : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Pass frames from `from` to `to` until `from` ends, pausing while `to`
 * is above its high-water mark. A frame `from`'s transport refused is
 * handed to `refused` instead.
 */
export async function pumpFrames(
  from: AsyncIterator<IncomingFrame>,
  to: Pick<FrameConnection, "send" | "onDrain">,
  refused: (frame: Exclude<IncomingFrame, { kind: "text" }>) => void,
): Promise<void> {
  const drained = drainWaiter(to);
  while (true) {
    const next = await from.next();
    if (next.done) return;
    const frame = next.value;
    if (frame.kind !== "text") {
      refused(frame);
      continue;
    }
    const ok = to.send(
      frame.payload
        ? new BinaryFrame(frame.text, frame.payload.field, frame.payload.bytes)
        : frame.text,
    );
    if (!ok) await drained();
  }
}
