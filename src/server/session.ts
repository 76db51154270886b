/**
 * One connection's session: the handshake gate, method routing, and the
 * connection's process table. Transport-agnostic: it reads frames from and
 * writes frames to a {@linkcode FrameConnection}.
 *
 * @module
 */
import { ErrorCode, invalidParams, invalidRequest, RpcError } from "../protocol/errors.ts";
import { type InitializeResult, Method, PROTOCOL_VERSION } from "../protocol/methods.ts";
import { paramsObject, requireString } from "../protocol/validate.ts";
import { show } from "../protocol/show.ts";
import { type CodexInitializeResult, isCodexInitialize } from "../protocol/codex.ts";
import type { FrameConnection, IncomingFrame } from "../rpc/connection.ts";
import { RpcPeer } from "../rpc/peer.ts";
import { SERVER_NAME, VERSION } from "../version.ts";
import { bwrapSupport } from "../process/sandbox/bwrap_support.ts";
import type { ServerOptions } from "./options.ts";
import type { MethodHandler } from "./process_methods.ts";
import { ProcessTable } from "./process_table.ts";
import { environmentInfo } from "./environment_info.ts";
import type { HttpRequests } from "./http_methods.ts";
import { MAX_OPEN_HANDLES } from "../protocol/file_handles.ts";
import { fileHandleCapability, sessionFileHandles } from "./file_handle_methods.ts";
import { type ResumableSession, type SessionKind, SessionRegistry } from "./resumable.ts";
import { readSessionRequest, type SessionInfo } from "../protocol/sessions.ts";
import { v0Http, v0Methods } from "./v0_methods.ts";
import { relayIfHeldElsewhere } from "./session_takeover.ts";
import { refusedFrameError } from "./session_relay.ts";

type HandshakeState = "new" | "initializing" | "ready";

/** How long answers to requests received before the end may still take. */
const SETTLE_ON_CLOSE_MS = 10_000;

/** What `initialize.capabilities.sandbox` says of this host. */
export type SandboxCapability =
  | { available: true; type: "bubblewrap"; version: string; arg0: boolean }
  | { available: false; reason: string };

/** Whether this host can run sandboxed processes (found out once, on first use). */
export async function sandboxCapability(): Promise<SandboxCapability> {
  const support = await bwrapSupport();
  return support.available
    ? { available: true, type: "bubblewrap", version: support.version, arg0: support.argv0 }
    : { available: false, reason: support.reason };
}

/**
 * Everything a session advertises in `initialize.capabilities`;
 * `binaryFrames` where its connection carries them (stdio and websocket,
 * not in process).
 */
export function capabilities(
  opts: ServerOptions,
  methods: string[],
  sandbox?: SandboxCapability,
  binaryFrames = false,
): Record<string, unknown> {
  return {
    methods: [...methods].sort(),
    ...(sandbox ? { sandbox } : {}),
    processStart: { pipeStdin: true, size: true, arg0: "pipe" },
    processOutput: { seq: true },
    processExited: { signal: true, timing: true },
    processRead: { evicted: true, exitedAfterLastChunk: true },
    processTerminate: { graceMs: true },
    processSignal: { names: "POSIX", interrupt: true },
    flowControl: true,
    errno: true,
    fileUris: true,
    fs: { rangedRead: true, append: true, writeOffset: true, rename: true },
    limits: {
      maxProcesses: opts.maxProcesses,
      maxExitedProcesses: opts.maxExitedProcesses,
      maxExitedOutputBytes: opts.maxExitedOutputBytes,
      maxMessageBytes: opts.maxMessageBytes,
      maxOutputBytes: opts.maxOutputBytes,
      exitedRetentionMs: opts.exitedRetentionMs,
      maxReadFileBytes: opts.maxReadFileBytes,
    },
    ...(binaryFrames ? { binaryFrames: true } : {}),
    http: { request: true, stream: true, headerEnvVars: true },
    walk: true,
    fileHandles: fileHandleCapability(MAX_OPEN_HANDLES),
    sessions: {
      resume: true,
      list: true,
      ttl: true,
      graceMs: opts.sessionGraceMs,
      maxTtlMs: opts.maxTtlMs,
    },
  };
}

/**
 * Serve one connection until it ends, then kill every process it started.
 *
 * @example
 * ```ts
 * import { Session } from "./session.ts";
 * import { resolveServerOptions } from "./options.ts";
 * // `conn` is any FrameConnection, e.g. a StdioConnection.
 * declare const conn: import("../rpc/connection.ts").FrameConnection;
 * await new Session(conn, resolveServerOptions()).run();
 * ```
 */
export class Session {
  #conn: FrameConnection;
  #opts: ServerOptions;
  #peer: RpcPeer;
  #table: ProcessTable;
  #http: HttpRequests;
  /** v0's handles live as long as the connection. */
  #handles = sessionFileHandles();
  #handlers: Map<string, MethodHandler>;
  #state: HandshakeState = "new";
  /** Set while the `initialize` answer is being made; requests behind it wait for it. */
  #initializing: Promise<void> | undefined;
  #clientName = "";
  #extraMethods: Map<string, MethodHandler>;
  #registry: SessionRegistry;
  /** Set when the connection is attached to a resumable session. */
  #resumable: ResumableSession | undefined;
  /** Why the session the client resumes could not be reached on another server. */
  #linkProblem: string | undefined;

  /**
   * Bind a session to a connection.
   *
   * @param registry where Codex-dialect sessions live between connections
   */
  constructor(
    conn: FrameConnection,
    opts: ServerOptions,
    extraMethods: Map<string, MethodHandler> = new Map(),
    registry: SessionRegistry = new SessionRegistry(),
  ) {
    this.#conn = conn;
    this.#opts = opts;
    this.#extraMethods = extraMethods;
    this.#registry = registry;
    // Found out while the client connects, so that `initialize` need not wait.
    void bwrapSupport();
    const sink = {
      send: (text: string) => {
        if (this.#peer.closed) return true;
        return conn.send(text);
      },
      onDrain: (listener: () => void) => conn.onDrain(listener),
    };
    this.#table = new ProcessTable(opts, sink);
    this.#http = v0Http(sink, opts);
    this.#handlers = new Map([
      ...v0Methods({ table: this.#table, http: this.#http, handles: this.#handles }, opts),
      ...extraMethods,
    ]);
    this.#peer = new RpcPeer({
      send: (text) => {
        conn.send(text);
      },
      binaryFrames: conn.binaryFrames === true,
      // Handlers adopt only buffers nobody else holds (fs/readFile's reads).
      releaseSentPayloads: true,
      onRequest: (method, params) => this.#onRequest(method, params),
      onNotification: (method) => this.#onNotification(method),
      onProblem: (message) => opts.logger.warn(message),
    });
  }

  /** The process table (for shutdown and tests). */
  get processes(): ProcessTable {
    return this.#table;
  }

  /** Read frames until the connection ends, then clean up. */
  async run(): Promise<void> {
    const frames = this.#conn.frames()[Symbol.asyncIterator]();
    try {
      while (true) {
        const next = await frames.next();
        if (next.done) break;
        const frame = next.value;
        if (this.#state === "new" && frame.kind === "text" && this.#opts.sessionDir) {
          // A resume of a session another server of this user holds.
          const relayed = await relayIfHeldElsewhere(frame, frames, this.#conn, {
            dir: this.#opts.sessionDir,
            isHere: (id) => this.#registry.has(id),
            highWaterBytes: this.#opts.outputHighWaterBytes,
            logger: this.#opts.logger,
          });
          if (relayed === "relayed") return;
          if (relayed !== undefined) this.#linkProblem = relayed;
        }
        this.#receive(frame);
      }
    } finally {
      this.#opts.logger.info(`connection ${this.#clientName || "(no handshake)"} ended`);
      this.#http.abortAll("the connection ended");
      // Awaited below: a stdio server exits right after, temporary files must be gone.
      const discarded = this.#handles.discardAll();
      if (this.#resumable) {
        // The Codex dialect's session outlives its connection for a while.
        this.#registry.detach(this.#resumable, this.#opts.sessionGraceMs);
      } else {
        // Killing first also wakes waiting reads, so that requests already
        // received (`printf ... | exec-server`) still get their answers.
        await this.#table.closeAll();
      }
      await this.#peer.settled(SETTLE_ON_CLOSE_MS);
      await discarded;
      this.#peer.close("connection ended");
    }
  }

  #receive(frame: IncomingFrame): void {
    if (frame.kind === "text") {
      this.#peer.receive(frame.text, frame.payload);
      return;
    }
    if (frame.kind === "tooLarge") this.#opts.logger.warn(`refused a ${frame.bytes}-byte message`);
    const { code, message } = refusedFrameError(frame);
    this.#peer.sendUnattributedError(code, message);
  }

  #onRequest(method: string, params: unknown): unknown {
    if (method === Method.Initialize) return this.#initialize(params);
    const handler = this.#handlers.get(method);
    if (this.#state !== "ready") {
      throw invalidRequest(
        this.#state === "new"
          ? `call initialize first (got ${method})`
          : `send initialized first (got ${method})`,
      );
    }
    if (!handler) {
      throw new RpcError(ErrorCode.MethodNotFound, `unknown method ${method}`);
    }
    // Answers keep the order of a pipelined batch: initialize's comes first.
    if (this.#initializing) return this.#initializing.then(() => handler(params));
    return handler(params);
  }

  #initialize(
    params: unknown,
  ): Promise<InitializeResult & { session?: SessionInfo }> | CodexInitializeResult {
    if (this.#state !== "new") throw invalidRequest("initialize was already called");
    if (isCodexInitialize(params)) return this.#initializeCodex(params);
    const p = paramsObject(params, Method.Initialize);
    const request = readSessionRequest(p);
    this.#clientName = typeof p.clientName === "string" ? p.clientName : "";
    const session = request ? this.#attach(request.resume ?? null, "v0") : undefined;
    this.#state = "initializing";
    this.#opts.logger.info(
      `client ${JSON.stringify(this.#clientName)} connected` +
        (session ? ` (${request?.resume ? "resumed" : "opened"} session ${session.id})` : ""),
    );
    const methods = [...this.#handlers.keys()];
    // Whether sandboxes can run is found out once per server, while clients connect.
    const reachable = session ? this.#registry.reachable() : Promise.resolve(false);
    const answer = Promise.all([sandboxCapability(), reachable]).then(([sandbox, fromOthers]) => ({
      protocolVersion: PROTOCOL_VERSION,
      serverInfo: { name: SERVER_NAME, version: VERSION },
      capabilities: capabilities(this.#opts, methods, sandbox, this.#conn.binaryFrames === true),
      ...(session
        ? {
          session: {
            id: session.id,
            resumed: request?.resume !== undefined,
            graceMs: this.#opts.sessionGraceMs,
            maxTtlMs: this.#opts.maxTtlMs,
            fromOtherServers: fromOthers,
          },
        }
        : {}),
    }));
    const settled = () => {
      this.#initializing = undefined;
    };
    this.#initializing = answer.then(settled, settled);
    return answer;
  }

  /** Attach to a new or a resumed Codex-dialect session. */
  #initializeCodex(params: unknown): CodexInitializeResult {
    const p = paramsObject(params, Method.Initialize);
    const resumeId = p.resumeSessionId;
    // Typed as upstream types them (-32602): clientName a string, the id a string or null.
    if (resumeId !== null && typeof resumeId !== "string") {
      throw invalidParams(`resumeSessionId must be a string or null, got ${show(resumeId)}`);
    }
    const clientName = requireString(p, "clientName");
    const session = this.#attach(resumeId, "codex");
    this.#clientName = clientName;
    this.#state = "initializing";
    this.#opts.logger.info(
      `client ${JSON.stringify(this.#clientName)} ${resumeId ? "resumed" : "opened"} ` +
        `session ${session.id} (Codex dialect)`,
    );
    return { sessionId: session.id, environmentInfo: environmentInfo() };
  }

  /**
   * Open a session (`resumeId` null) or resume one, and serve it from now on.
   *
   * @throws {RpcError} -32600 when it cannot be resumed
   */
  #attach(resumeId: string | null, kind: SessionKind): ResumableSession {
    if (resumeId !== null && this.#linkProblem !== undefined && !this.#registry.has(resumeId)) {
      throw invalidRequest(`session ${resumeId} cannot be resumed: ${this.#linkProblem}`);
    }
    const session = resumeId === null
      ? this.#registry.create(this.#opts, kind)
      : this.#registry.resume(resumeId, kind);
    session.attach(this.#conn);
    this.#resumable = session;
    this.#table = session.table;
    this.#handlers = new Map([...session.handlers, ...this.#extraMethods]);
    return session;
  }

  #onNotification(method: string): void {
    if (method === Method.Initialized) {
      if (this.#state === "initializing") this.#state = "ready";
      return;
    }
    this.#opts.logger.debug(`ignored notification ${method}`);
  }
}
