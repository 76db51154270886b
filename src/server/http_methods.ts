/**
 * The `http/request` method of one session (see ../protocol/http_request.ts
 * and ./http_request.ts): a buffered body comes back in the answer (at most
 * `maxBufferedBytes`), a streamed one as `http/request/bodyDelta`
 * notifications after it, paused while the connection is above its high
 * water mark, so a slow client slows the download rather than growing the
 * server. A streamed request's id is reserved until its last notification.
 *
 * @module
 */
import process from "node:process";
import { encodeBase64 } from "../protocol/base64.ts";
import { internalError, invalidParams, invalidRequest, RpcError } from "../protocol/errors.ts";
import {
  checkHttpRequest,
  HttpBodyDelta,
  type HttpBodyDeltaParams,
  HttpRequest,
  type HttpRequestResult,
} from "../protocol/http_request.ts";
import { paramsObject } from "../protocol/validate.ts";
import { ResultWithEffect } from "../rpc/peer.ts";
import type { SandboxReader } from "./fs_sandbox.ts";
import type { HttpExchange } from "./http_request.ts";
import { addHandler, type Answer, type MethodHandler } from "./method_handlers.ts";
import type { NotificationSink } from "./process_table.ts";

/**
 * ./http_request.ts, loaded by the first request: node:http, node:https
 * and node:zlib would otherwise add to every stdio server's start, which
 * an ssh client waits for.
 */
let exchangeModule: typeof import("./http_request.ts") | undefined;
const loadExchanges = async () => exchangeModule ??= await import("./http_request.ts");

/** Options of {@linkcode HttpRequests}. */
export interface HttpRequestsOptions {
  /** The largest body a buffered (not streamed) answer carries. */
  maxBufferedBytes: number;
  /** Reads a request's `sandbox` member. */
  readSandbox: SandboxReader;
}

/** The `http/request` exchanges of one session. */
export class HttpRequests {
  #sink: NotificationSink;
  #opts: HttpRequestsOptions;
  /** Streamed requests, by id, from the request until their last notification. */
  #streams = new Map<string, HttpExchange | undefined>();
  #paused = new Set<HttpExchange>();
  #exchanges = new Set<HttpExchange>();

  /** Send notifications to `sink`. */
  constructor(sink: NotificationSink, opts: HttpRequestsOptions) {
    this.#sink = sink;
    this.#opts = opts;
    sink.onDrain(() => {
      const paused = [...this.#paused];
      this.#paused.clear();
      for (const exchange of paused) exchange.body.resume();
    });
  }

  /** The handler, to register under `http/request`. */
  handlers(): Map<string, MethodHandler> {
    const handlers = new Map<string, MethodHandler>();
    addHandler(handlers, HttpRequest, (params) => this.#request(params));
    return handlers;
  }

  /** Stop every exchange in flight (the session ended or lost its connection). */
  abortAll(reason: string): void {
    for (const exchange of [...this.#exchanges]) exchange.abort(reason);
  }

  async #request(params: unknown): Promise<Answer<HttpRequestResult>> {
    const p = paramsObject(params, HttpRequest.method);
    if (
      p.streamResponse === true && typeof p.requestId === "string" && this.#streams.has(p.requestId)
    ) {
      throw invalidParams(
        `http/request streamResponse requestId \`${p.requestId}\` is already active`,
      );
    }
    const request = checkHttpRequest(p, process.env);
    const policy = this.#opts.readSandbox(p.sandbox);
    if (policy && !policy.network) {
      throw invalidRequest(
        `http/request to ${request.url.origin} refused: the request's sandbox restricts the network`,
        { sandboxDenied: true },
      );
    }
    if (request.stream) this.#streams.set(request.requestId, undefined);
    let exchange: HttpExchange;
    try {
      exchange = await (await loadExchanges()).openExchange(request);
    } catch (err) {
      if (request.stream) this.#streams.delete(request.requestId);
      throw internalError(`http/request failed: ${(err as Error).message}`);
    }
    this.#exchanges.add(exchange);
    exchange.body.once("close", () => this.#exchanges.delete(exchange));
    const head = { status: exchange.status, headers: exchange.headers };
    if (!request.stream) return { ...head, bodyBase64: await this.#whole(exchange) };
    this.#streams.set(request.requestId, exchange);
    return new ResultWithEffect({ ...head, bodyBase64: "" }, () => {
      this.#pump(request.requestId, exchange);
    });
  }

  /** The whole body, base64. */
  async #whole(exchange: HttpExchange): Promise<string> {
    const parts: Uint8Array[] = [];
    let bytes = 0;
    try {
      for await (const chunk of exchange.body) {
        bytes += (chunk as Uint8Array).byteLength;
        if (bytes > this.#opts.maxBufferedBytes) {
          exchange.abort("too large");
          throw internalError(
            `http/request response body is over ${this.#opts.maxBufferedBytes} bytes; ask for streamResponse`,
          );
        }
        parts.push(chunk as Uint8Array);
      }
    } catch (err) {
      if (err instanceof RpcError) throw err;
      const { bodyErrorMessage } = await loadExchanges();
      throw internalError(`failed to read http/request response body: ${bodyErrorMessage(err)}`);
    }
    const all = new Uint8Array(bytes);
    let at = 0;
    for (const part of parts) {
      all.set(part, at);
      at += part.byteLength;
    }
    return encodeBase64(all);
  }

  /** Send the body as notifications, pausing while the connection is full. */
  #pump(requestId: string, exchange: HttpExchange): void {
    let seq = 1;
    const note = (params: Omit<HttpBodyDeltaParams, "requestId" | "seq">): boolean =>
      this.#sink.send(JSON.stringify({
        method: HttpBodyDelta.method,
        params: { requestId, seq: seq++, ...params },
      }));
    let finished = false;
    const finish = (error: string | null) => {
      if (finished) return;
      finished = true;
      this.#paused.delete(exchange);
      this.#streams.delete(requestId);
      note({ deltaBase64: "", done: true, error });
    };
    exchange.body.on("data", (chunk: Uint8Array) => {
      if (!note({ deltaBase64: encodeBase64(chunk), done: false, error: null })) {
        exchange.body.pause();
        this.#paused.add(exchange);
      }
    });
    exchange.body.once("end", () => finish(null));
    // Loaded already: this exchange was opened by it.
    exchange.body.once("error", (err) => finish(exchangeModule!.bodyErrorMessage(err)));
    exchange.body.once("close", () => finish("the response ended early"));
  }
}
