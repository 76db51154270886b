/**
 * Method handlers registered by protocol descriptor, so that what a
 * handler returns must be the result type the client expects for that
 * method (both ends share the descriptor).
 *
 * @module
 */
import type { RequestType } from "../protocol/descriptors.ts";
import type { ResultWithEffect } from "../rpc/peer.ts";
import type { Base64Part } from "../protocol/base64.ts";

/** A method handler: params in, result (or thrown RpcError) out. */
export type MethodHandler = (params: unknown) => unknown;

/**
 * A result as a handler may give it: any string field of it may be a
 * {@linkcode Base64Part} (bytes the transport sends as base64).
 */
export type Wire<R> = R extends object
  ? { [K in keyof R]: R[K] extends string ? R[K] | Base64Part : R[K] }
  : R;

/** A result, or a result with what must happen once it was sent. */
export type Answer<R> = Wire<R> | ResultWithEffect<R>;

/** A handler whose result is typed by its method's descriptor. */
export type TypedHandler<R> = (params: unknown) => Answer<R> | Promise<Answer<R>>;

/**
 * Register `handler` for `type`'s method in `handlers`. Params stay
 * `unknown`: they come from the wire and the handler checks them.
 *
 * @example
 * ```ts
 * import { Requests } from "../protocol/descriptors.ts";
 * import { addHandler, type MethodHandler } from "./method_handlers.ts";
 * const handlers = new Map<string, MethodHandler>();
 * addHandler(handlers, Requests.processTerminate, () => ({ running: false }));
 * ```
 */
export function addHandler<P, R>(
  handlers: Map<string, MethodHandler>,
  type: RequestType<P, R>,
  handler: TypedHandler<R>,
): void {
  handlers.set(type.method, handler);
}
