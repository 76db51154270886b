/**
 * A connection that resumes a session this server does not hold, but
 * another server of the same user does (a stdio server whose ssh dropped,
 * still running its processes): found by its socket in the session
 * directory and relayed to, frame by frame, for the rest of the
 * connection. Everything else is left to the connection's own session.
 *
 * @module
 */
import type { FrameConnection, IncomingFrame } from "../rpc/connection.ts";
import type { Logger } from "./logger.ts";
import { within } from "../util/deadline.ts";
import {
  type ByteSink,
  LinkRefusedError,
  openSessionLink,
  pumpBytes,
  pumpFrames,
  refusedLine,
} from "./session_relay.ts";

/** Where to look, and what this server holds itself. */
export interface TakeoverOptions {
  /** The private session directory. */
  dir: string;
  /** Whether this server holds session `id`. */
  isHere: (id: string) => boolean;
  /** Output queue size above which the link's reading pauses. */
  highWaterBytes?: number;
  /** Where diagnostics go. */
  logger: Logger;
}

/**
 * The session id an `initialize` frame resumes, in either dialect: the
 * Codex CLI's `resumeSessionId`, or v0's `session.resume`.
 *
 * @example
 * ```ts
 * import { resumedSessionId } from "./session_takeover.ts";
 * resumedSessionId('{"id":1,"method":"initialize","params":{"resumeSessionId":"s1"}}'); // "s1"
 * resumedSessionId('{"id":1,"method":"initialize","params":{"session":{"resume":"s2"}}}'); // "s2"
 * resumedSessionId('{"id":1,"method":"process/list"}'); // undefined
 * ```
 */
export function resumedSessionId(text: string): string | undefined {
  // Nearly every first frame is a fresh initialize: no second parse for those.
  if (!text.includes("esume")) return undefined;
  let m;
  try {
    m = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (m?.method !== "initialize" || typeof m.params !== "object" || m.params === null) {
    return undefined;
  }
  const codex = m.params.resumeSessionId;
  if (typeof codex === "string" && codex !== "") return codex;
  const v0 = m.params.session?.resume;
  return typeof v0 === "string" && v0 !== "" ? v0 : undefined;
}

/**
 * Relay the connection to the server holding the session that `first`
 * resumes, until either end goes away.
 *
 * @returns `"relayed"` once the relayed connection has ended; a sentence
 * when a server holds the session but the link to it failed (the
 * `initialize` is answered with it); undefined when the session is here
 * or nowhere
 */
export async function relayIfHeldElsewhere(
  first: IncomingFrame & { kind: "text" },
  rest: AsyncIterator<IncomingFrame>,
  client: FrameConnection,
  opts: TakeoverOptions,
): Promise<"relayed" | string | undefined> {
  const id = resumedSessionId(first.text);
  if (id === undefined || opts.isHere(id)) return undefined;
  // The holder's output is passed on as bytes: only a stdio connection takes them.
  const sink = client as FrameConnection & Partial<ByteSink>;
  if (typeof sink.sendBytes !== "function") return undefined;
  let link;
  try {
    link = await openSessionLink(opts.dir, id, opts.highWaterBytes);
  } catch (err) {
    if (err instanceof LinkRefusedError) return err.message;
    return `its server could not be reached: ${(err as Error).message}`;
  }
  if (!link) return undefined;
  opts.logger.info(`relaying session ${id} to the server that holds it`);
  link.toHolder.send(first.text);
  // A frame refused here is answered by the holder, in its place in the stream.
  const toHolder = pumpFrames(
    rest,
    link.toHolder,
    (frame) => link.toHolder.send(refusedLine(frame)),
  );
  const toClient = pumpBytes(link, sink as ByteSink);
  // Whichever end goes first, the other is closed: the holder then sees its
  // connection end (and keeps the session), or the client sees EOF.
  await Promise.race([toHolder, toClient]).catch(() => {});
  await link.toHolder.close().catch(() => {});
  await within(toClient.catch(() => {}), 1000);
  link.destroy();
  return "relayed";
}
