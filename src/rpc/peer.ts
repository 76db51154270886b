/**
 * A transport-free JSON-RPC peer: it turns received text into calls of its
 * handlers, answers requests, and matches responses to pending calls.
 * Both the server's sessions and the client are built on it.
 *
 * @module
 */
import { ErrorCode, RpcError } from "../protocol/errors.ts";
import { classifyMessage, type ErrorObject, type RequestId } from "../protocol/messages.ts";
import type { OutgoingFrame } from "./connection.ts";
import { stringifyMessage } from "./verbatim.ts";
import { BinaryFrame, placePayload } from "./binary_frame.ts";
import { payloadPool } from "./payload_pool.ts";

/**
 * A request handler's result that also runs `afterSend` right after the
 * response has been handed to the transport, so that anything the callback
 * sends is ordered after the response.
 */
export class ResultWithEffect<R = unknown> {
  /** The result to send. */
  readonly result: R;
  /** Runs once the response was sent. */
  readonly afterSend: () => void;

  /** Pair a result with what must happen after it is sent. */
  constructor(result: R, afterSend: () => void) {
    this.result = result;
    this.afterSend = afterSend;
  }
}

/** What a peer calls for received requests and notifications. */
export interface PeerHandlers {
  /** Answer a request; throw an {@linkcode RpcError} to answer with an error. */
  onRequest?(method: string, params: unknown, id: RequestId): unknown;
  /** Handle a notification. Errors thrown here are reported, not sent. */
  onNotification?(method: string, params: unknown): void;
  /** Something unusual that the peer handled by itself (for logs). */
  onProblem?(message: string): void;
}

/** Options for {@linkcode RpcPeer}. */
export interface PeerOptions extends PeerHandlers {
  /** Hand one serialized message to the transport. */
  send(frame: OutgoingFrame): void;
  /**
   * **[ext]** The transport carries binary frames: a message with a
   * {@linkcode Base64Part} marked `binaryFrame` is sent as one.
   */
  binaryFrames?: boolean;
  /**
   * **[ext]** Give each binary frame's payload to the payload pool once it
   * was sent (a connection's `send` has copied it by then): a buffer the
   * pool adopted is freed at once. For the server, whose handlers adopt
   * only buffers nobody else holds (default false).
   */
  releaseSentPayloads?: boolean;
}

/** Thrown by pending and later calls once the peer has been closed. */
export class PeerClosedError extends Error {
  /** Describe why the peer closed. */
  constructor(reason: string) {
    super(`connection closed: ${reason}`);
    this.name = "PeerClosedError";
  }
}

/** The error a remote peer answered with, as a thrown value. */
export class RemoteError extends Error {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The error's `data` member. */
  readonly data: unknown;

  /** Wrap an error object received on the wire. */
  constructor(error: ErrorObject, method: string) {
    super(`${method}: ${error.message} (code ${error.code})`);
    this.name = "RemoteError";
    this.code = error.code;
    this.data = error.data;
  }
}

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(reason: unknown): void;
}

/**
 * A JSON-RPC 2.0 peer that never sends the `jsonrpc` member.
 *
 * @example
 * ```ts
 * import { frameText } from "./connection.ts";
 * import { RpcPeer } from "./peer.ts";
 * const sent: string[] = [];
 * const peer = new RpcPeer({ send: (frame) => sent.push(frameText(frame)) });
 * const answer = peer.request("initialize", { clientName: "demo" });
 * peer.receive('{"id":1,"result":{"protocolVersion":"exec-server.v0"}}');
 * await answer; // { protocolVersion: "exec-server.v0" }
 * ```
 */
export class RpcPeer {
  #opts: PeerOptions;
  #nextId = 1;
  #pending = new Map<RequestId, Pending>();
  #closed: string | undefined;
  #inFlight = 0;
  #idle: (() => void)[] = [];

  /** Create a peer that sends through `opts.send`. */
  constructor(opts: PeerOptions) {
    this.#opts = opts;
  }

  /** Whether {@linkcode RpcPeer.close} has been called. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /** The number of calls waiting for a response. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** The number of received requests whose answer has not been sent yet. */
  get inFlightCount(): number {
    return this.#inFlight;
  }

  /**
   * Resolves once every received request has been answered, or after
   * `timeoutMs`, whichever comes first.
   */
  settled(timeoutMs: number): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#idle = this.#idle.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#idle.push(done);
    });
  }

  /**
   * Handle one received message (a line or a frame), with the payload of a
   * binary frame, which becomes its `field` (a {@linkcode Base64Part}).
   */
  receive(text: string, payload?: { field: string; bytes: Uint8Array }): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      this.#sendError(null, {
        code: ErrorCode.ParseError,
        message: `parse error: ${detail}`,
      });
      return;
    }
    if (payload && !placePayload(value, payload.field, payload.bytes)) {
      const id = (value as { id?: unknown } | null)?.id;
      this.#sendError(typeof id === "number" || typeof id === "string" ? id : null, {
        code: ErrorCode.InvalidRequest,
        message: `invalid request: a binary frame's ${payload.bytes.byteLength}-byte payload ` +
          `has no place: ${
            JSON.stringify(payload.field)
          } must be absent from an object params or result`,
      });
      return;
    }
    this.receiveValue(value);
  }

  /** Handle one already-parsed message. */
  receiveValue(value: unknown): void {
    const msg = classifyMessage(value);
    switch (msg.kind) {
      case "request":
        this.#handleRequest(msg.message.id, msg.message.method, msg.message.params);
        return;
      case "notification":
        try {
          this.#opts.onNotification?.(msg.message.method, msg.message.params);
        } catch (err) {
          this.#opts.onProblem?.(
            `notification ${msg.message.method} failed: ${String(err)}`,
          );
        }
        return;
      case "response": {
        const pending = this.#pending.get(msg.message.id);
        if (!pending) {
          this.#opts.onProblem?.(
            `ignored a response to unknown id ${JSON.stringify(msg.message.id)}`,
          );
          return;
        }
        this.#pending.delete(msg.message.id);
        pending.resolve(msg.message.result);
        return;
      }
      case "error": {
        const id = msg.message.id;
        const pending = id === null ? undefined : this.#pending.get(id);
        if (!pending || id === null) {
          this.#opts.onProblem?.(
            `ignored an error for id ${JSON.stringify(id)}: ${msg.message.error.message}`,
          );
          return;
        }
        this.#pending.delete(id);
        pending.reject(new RemoteError(msg.message.error, pending.method));
        return;
      }
      case "invalid":
        this.#sendError(msg.id, {
          code: ErrorCode.InvalidRequest,
          message: `invalid request: ${msg.reason}`,
        });
        return;
    }
  }

  /** Answer with an error that belongs to no request (`id: null`). */
  sendUnattributedError(code: number, message: string): void {
    this.#sendError(null, { code, message });
  }

  /** Call a method on the other side. */
  request<T = unknown>(method: string, params?: unknown): Promise<T> {
    if (this.#closed !== undefined) {
      return Promise.reject(new PeerClosedError(this.#closed));
    }
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, {
        method,
        resolve: resolve as (v: unknown) => void,
        reject,
      });
      try {
        this.#opts.send(
          this.#frame(params === undefined ? { id, method } : { id, method, params }),
        );
      } catch (err) {
        this.#pending.delete(id);
        reject(err);
      }
    });
  }

  /** Send a notification. */
  notify(method: string, params?: unknown): void {
    if (this.#closed !== undefined) return;
    this.#opts.send(
      JSON.stringify(params === undefined ? { method } : { method, params }),
    );
  }

  /**
   * Stop: reject every pending call and all later ones.
   *
   * @param reason why, used in the errors' messages
   * @param makeError builds the rejection for each pending call
   */
  close(
    reason: string,
    makeError: (reason: string) => Error = (r) => new PeerClosedError(r),
  ): void {
    if (this.#closed !== undefined) return;
    this.#closed = reason;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(makeError(reason));
  }

  #handleRequest(id: RequestId, method: string, params: unknown): void {
    const handler = this.#opts.onRequest;
    if (!handler) {
      this.#sendError(id, {
        code: ErrorCode.MethodNotFound,
        message: `unknown method ${method}`,
      });
      return;
    }
    let outcome: unknown;
    try {
      outcome = handler(method, params, id);
    } catch (err) {
      this.#replyError(id, method, err);
      return;
    }
    if (outcome instanceof Promise) {
      this.#inFlight++;
      outcome.then(
        (value) => this.#replyResult(id, value),
        (err) => this.#replyError(id, method, err),
      ).finally(() => {
        if (--this.#inFlight === 0) { for (const w of [...this.#idle]) w(); }
      });
    } else {
      this.#replyResult(id, outcome);
    }
  }

  #replyResult(id: RequestId, value: unknown): void {
    if (this.#closed !== undefined) return;
    if (value instanceof ResultWithEffect) {
      this.#sendResult(this.#frame({ id, result: value.result ?? {} }));
      value.afterSend();
      return;
    }
    this.#sendResult(this.#frame({ id, result: value ?? {} }));
  }

  #sendResult(frame: OutgoingFrame): void {
    this.#opts.send(frame);
    if (this.#opts.releaseSentPayloads && frame instanceof BinaryFrame) {
      payloadPool.give(frame.bytes);
    }
  }

  /** A request or response, serialized: a binary frame where one may go. */
  #frame(
    message: { id: RequestId; method?: string; params?: unknown; result?: unknown },
  ): OutgoingFrame {
    return stringifyMessage(message, { binaryFrames: this.#opts.binaryFrames });
  }

  #replyError(id: RequestId, method: string, err: unknown): void {
    if (err instanceof RpcError) {
      this.#sendError(id, {
        code: err.code,
        message: err.message,
        ...(err.data !== undefined ? { data: err.data } : {}),
      });
      return;
    }
    const detail = err instanceof Error ? err.message : String(err);
    this.#opts.onProblem?.(`${method} failed unexpectedly: ${String(err)}`);
    this.#sendError(id, {
      code: ErrorCode.InternalError,
      message: `${method} failed: ${detail}`,
    });
  }

  #sendError(id: RequestId | null, error: ErrorObject): void {
    if (this.#closed !== undefined) return;
    this.#opts.send(JSON.stringify({ id, error }));
  }
}
