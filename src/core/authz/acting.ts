import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from './principal.ts';

/**
 * The principal a request's handler runs as, for the code that records what it causes (audit
 * rows, events): every row written while an administrator impersonates someone carries the
 * impersonator, without each service having to remember to pass it along. Entered just before
 * the handler (core/http/authenticate.ts wraps every authenticated route's handler), so the whole
 * handler and everything it awaits sees it. The principal itself is the store: nothing is
 * allocated per request.
 */
const storage = new AsyncLocalStorage<Principal>();

export function actingPrincipal(): Principal | undefined {
  return storage.getStore();
}

export function runAs<R, A extends unknown[]>(principal: Principal, fn: (...args: A) => R, ...args: A): R {
  return storage.run(principal, fn, ...args);
}
