import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from './principal.ts';

/**
 * The principal a request's handler runs as, for the code that records what it causes (audit
 * rows, events): every row written while an administrator impersonates someone carries the
 * impersonator, without each service having to remember to pass it along. Entered just before
 * the handler (preHandler), so the whole handler and everything it awaits sees it.
 */
const storage = new AsyncLocalStorage<{ principal: Principal }>();

export function actingPrincipal(): Principal | undefined {
  return storage.getStore()?.principal;
}

export function runAs<T>(principal: Principal, fn: () => T): T {
  return storage.run({ principal }, fn);
}
