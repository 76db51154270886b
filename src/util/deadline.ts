/**
 * Waiting with a time limit, written once.
 *
 * @module
 */

/**
 * `promise`'s value, or undefined once `ms` have passed (the promise keeps
 * running; its later rejection is not reported).
 *
 * @example
 * ```ts
 * import { within } from "./deadline.ts";
 * const value = await within(new Promise((r) => setTimeout(() => r(1), 50)), 10);
 * console.log(value); // undefined
 * ```
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => timer = setTimeout(() => resolve(undefined), ms)),
  ]).finally(() => clearTimeout(timer));
}

/**
 * `promise`'s value, or a rejection with `onTimeout()` once `ms` have
 * passed.
 *
 * @example
 * ```ts
 * import { deadline } from "./deadline.ts";
 * await deadline(Promise.resolve(1), 1000, () => new Error("too slow")); // 1
 * ```
 */
export function deadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => timer = setTimeout(() => reject(onTimeout()), ms)),
  ]).finally(() => clearTimeout(timer));
}
