import { randomUUID } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import { eventsPublished } from '../../../core/events/index.ts';
import { createRateLimiter } from '../delivery/pacing/rate-limit.ts';
import { createGuardedDispatcher } from '../../../core/net/ssrf.ts';
import { recordOutcomes, type AttemptOutcome } from './record-outcomes.ts';
import { endpointsHeldElsewhere, releaseEndpoints, renewEndpoints, takeEndpoints } from './endpoint-owners.ts';
import { createSender } from './send-message.ts';
import {
  claimDue,
  extendLeases,
  fanOut,
  loadEndpoints,
  pruneDeliveryLog,
  releaseHeld,
  type EndpointRow,
  type HeldMessage,
  type QueueHold,
} from './message-store.ts';

export interface DeliveryOptions {
  /** How long a claimed message stays leased to this process without a heartbeat; default 20 s. */
  leaseMs?: number;
  /** Idle poll interval for events published by other processes; default 50 ms. */
  pollMs?: number;
  /** Events fanned out / messages claimed per round trip; default 500. */
  batchSize?: number;
  /** Concurrent requests per endpoint; default 32. */
  endpointConcurrency?: number;
  /** Messages held in memory (queued + in flight) across endpoints; default 4,000. */
  maxHeld?: number;
  /**
   * Group-commit window for attempt results; default 20 ms. Each commit rewrites the index pages it
   * touched, so fewer, larger batches cost less per attempt; the first attempt is not delayed by it.
   */
  flushMs?: number;
}

export interface RoundSummary {
  fannedOut: number;
  attempted: number;
  succeeded: number;
  failed: number;
  exhausted: number;
}

interface EndpointState {
  row: EndpointRow;
  queue: HeldMessage[];
  inFlight: number;
  timer?: NodeJS.Timeout;
  /** When this process last took on messages of the endpoint (epoch ms). */
  takenAt: number;
}

/**
 * Delivers webhook messages: fans committed events out to matching endpoints, holds each endpoint's
 * messages in its own queue (its own concurrency and rate limit, so a slow or dead endpoint only
 * slows itself), signs and sends them, and records every attempt in batched transactions. Leases
 * make it crash-safe: whatever a dead process held is picked up again when its lease runs out.
 */
export function createDeliveryEngine(deps: Deps, options: DeliveryOptions & { manual?: boolean } = {}) {
  const leaseMs = options.leaseMs ?? 20_000;
  const pollMs = options.pollMs ?? 50;
  const batchSize = options.batchSize ?? 500;
  const concurrency = options.endpointConcurrency ?? 32;
  const maxHeld = options.maxHeld ?? 4000;
  const flushMs = options.flushMs ?? 20;
  const manual = options.manual ?? false;
  const workerId = randomUUID();
  const now = () => deps.clock.now();
  // Made by the first delivery (undici loads with it), not when the engine starts (lean start).
  let agent: ReturnType<typeof createGuardedDispatcher> | undefined;
  const dispatcher = () =>
    (agent ??= createGuardedDispatcher({ allowPrivate: deps.config.allowPrivateTargets, connections: concurrency }));
  const limiter = createRateLimiter(now);
  const send = createSender(deps, dispatcher);
  const states = new Map<string, EndpointState>();
  const inFlight = new Set<Promise<void>>();
  let held = 0;
  /** Holds whose outcome commit failed (since when): their queue rows are left to run out. */
  const stuck = new Map<QueueHold, number>();
  let outcomes: AttemptOutcome[] = [];
  let dropped: HeldMessage[] = [];
  let flushing: Promise<void> = Promise.resolve();
  let flushTimer: NodeJS.Timeout | undefined;
  const totals = { succeeded: 0, failed: 0, exhausted: 0, attempted: 0 };
  /**
   * Messages this process took on: leased as the fan-out wrote them, or leased later by a claim;
   * and how many fan-outs took events.
   */
  const taken = { atFanOut: 0, byClaim: 0, fanOuts: 0 };

  // Rate-limited endpoints are delivered by one process at a time (endpoint-owners.ts): those this
  // process holds (until when), and those another process holds (re-read at most once a second).
  const ownedUntil = new Map<string, number>();
  let elsewhere = new Set<string>();
  let elsewhereReadAt = Number.NEGATIVE_INFINITY;
  let rateLimitedSeen = false;
  const limited = (row: EndpointRow | undefined) => typeof row?.rate_limit === 'number' && row.rate_limit > 0;

  /**
   * Keeps the messages this process may deliver: of a rate-limited endpoint only while it holds the
   * endpoint (taken here when free); the others are given back at once, due now, for the holder.
   */
  async function admit(
    messages: readonly HeldMessage[],
    rows: ReadonlyMap<string, EndpointRow>,
  ): Promise<readonly HeldMessage[]> {
    const at = now();
    const need = new Set<string>();
    for (const m of messages)
      if (limited(rows.get(m.endpointId)) && (ownedUntil.get(m.endpointId) ?? 0) < at + leaseMs / 2)
        need.add(m.endpointId);
    if (need.size === 0) return messages;
    rateLimitedSeen = true;
    const got = await takeEndpoints(deps.db, workerId, [...need], at, leaseMs);
    for (const id of need) {
      if (got.has(id)) {
        ownedUntil.set(id, at + leaseMs);
        elsewhere.delete(id);
      } else {
        ownedUntil.delete(id);
        elsewhere.add(id);
      }
    }
    const refused = messages.filter((m) => need.has(m.endpointId) && !got.has(m.endpointId));
    if (refused.length === 0) return messages;
    await releaseHeld(deps.db, workerId, refused, at, now());
    return messages.filter((m) => !(need.has(m.endpointId) && !got.has(m.endpointId)));
  }

  // How many messages of one endpoint this process holds at most (queued + in flight).
  const capacityOf = (row: EndpointRow) => Math.max(concurrency * 16, Math.min(row.rate_limit ?? 0, 2000));
  const saturated = (s: EndpointState) => s.queue.length + s.inFlight >= capacityOf(s.row);
  const load = (id: string) => {
    const s = states.get(id);
    return s ? s.queue.length + s.inFlight : 0;
  };

  function deliver(state: EndpointState, message: HeldMessage): void {
    state.inFlight += 1;
    const at = now();
    const p = send(state.row, message)
      .then(
        (result) => {
          outcomes.push({
            message,
            at,
            ok: result.ok,
            status: result.status,
            latencyMs: result.latencyMs,
            responseBody: result.responseBody,
            errorClass: result.errorClass,
            retryAfterSeconds: result.retryAfterSeconds,
            abort: !result.ok && result.responseHeaders['webhook-delivery'] === 'abort-message',
          });
        },
        (error: unknown) => {
          outcomes.push({ message, at, ok: false, latencyMs: 0, responseBody: '', errorClass: 'other' });
          deps.log.error({ err: error, messageId: message.id }, 'webhook send failed unexpectedly');
        },
      )
      .finally(() => {
        state.inFlight -= 1;
        held -= 1;
        inFlight.delete(p);
        scheduleFlush();
        pump(state);
        // A backlogged endpoint's queue half empty: fetch more now rather than at the next poll, so
        // it does not run dry while the database answers.
        if (state.queue.length === capacityOf(state.row) >> 1) {
          claimSoon = true;
          wake?.();
        }
      });
    inFlight.add(p);
  }

  function pump(state: EndpointState): void {
    while (state.queue.length > 0 && state.inFlight < concurrency) {
      const wait = limiter.take(state.row.id, state.row.rate_limit);
      if (wait > 0) {
        if (!manual && !state.timer && running)
          state.timer = setTimeout(() => {
            state.timer = undefined;
            pump(state);
          }, wait);
        return;
      }
      deliver(state, state.queue.shift()!);
    }
  }

  function enqueue(messages: readonly HeldMessage[], rows: ReadonlyMap<string, EndpointRow>): void {
    for (const message of messages) {
      const row = rows.get(message.endpointId);
      if (!row || row.disabled === 1) {
        dropped.push(message);
        continue;
      }
      let state = states.get(row.id);
      if (!state) states.set(row.id, (state = { row, queue: [], inFlight: 0, takenAt: 0 }));
      state.row = row;
      state.takenAt = now();
      state.queue.push(message);
      held += 1;
    }
    for (const id of new Set(messages.map((m) => m.endpointId))) {
      const state = states.get(id);
      if (state) pump(state);
    }
    if (dropped.length > 0) scheduleFlush();
  }

  async function flush(): Promise<void> {
    const run = async () => {
      clearTimeout(flushTimer);
      flushTimer = undefined;
      if (abandoned) {
        outcomes = [];
        dropped = [];
        return;
      }
      if (outcomes.length === 0 && dropped.length === 0) return;
      const batch = outcomes;
      const gone = dropped;
      outcomes = [];
      dropped = [];
      try {
        const summary = await recordOutcomes(deps.db, workerId, now(), batch, gone);
        totals.attempted += batch.length;
        totals.succeeded += summary.succeeded;
        totals.failed += batch.length - summary.succeeded;
        totals.exhausted += summary.exhausted;
        const delivered = deps.metrics?.webhookDeliveries;
        if (delivered) {
          delivered.inc({ outcome: 'succeeded' }, summary.succeeded);
          delivered.inc({ outcome: 'retrying' }, summary.retrying);
          delivered.inc({ outcome: 'exhausted' }, summary.exhausted);
        }
        for (const id of summary.disabledEndpoints)
          states
            .get(id)
            ?.queue.splice(0)
            .forEach((m) => {
              held -= 1;
              dropped.push(m);
            });
        if (dropped.length > 0) scheduleFlush();
      } catch (error) {
        // Unrecorded outcomes are retried when the leases run out: at least once, never lost. The
        // queue rows of held messages (no row yet) are no longer renewed, so that they run out too.
        for (const m of [...batch.map((o) => o.message), ...gone]) if (m.hold) stuck.set(m.hold, now());
        deps.log.error({ err: error, count: batch.length }, 'could not record webhook attempts');
      }
    };
    flushing = flushing.then(run, run);
    return flushing;
  }

  function scheduleFlush(): void {
    if (manual) return;
    if (outcomes.length >= 256) void flush();
    else if (!flushTimer) flushTimer = setTimeout(() => void flush(), flushMs);
  }

  /**
   * Re-reads the endpoints this process holds queued messages for (at most once a second), so an
   * endpoint disabled, deleted or re-pointed meanwhile is honoured for what is still queued.
   */
  let refreshedAt = 0;
  let claimSoon = true;
  let nextClaimAt = 0;
  let nextExpiredAt = 0;
  async function refreshHeldEndpoints(): Promise<void> {
    if (now() - refreshedAt < 1000) return;
    refreshedAt = now();
    const waiting = [...states.values()].filter((s) => s.queue.length > 0);
    if (waiting.length === 0) return;
    const rows = await loadEndpoints(
      deps.db,
      waiting.map((s) => s.row.id),
    );
    for (const state of waiting) {
      const row = rows.get(state.row.id);
      if (row && row.disabled === 0) {
        state.row = row;
        continue;
      }
      const gone = state.queue.splice(0);
      held -= gone.length;
      dropped.push(...gone);
    }
    if (dropped.length > 0) scheduleFlush();
  }

  /**
   * How many events the next fan-out takes. A message fanned out while its endpoint's queue is full
   * is written as pending and has to be leased again by a claim: a second write of its row and a
   * scan. So the fan-out takes what the emptiest active endpoint (one with messages held, or taken
   * on in the last second) has room for; with none active, one endpoint's capacity. While every
   * active endpoint is full the events wait in the fan-out queue; after a second of that (a slow or
   * dead endpoint), one batch goes anyway, so other endpoints and organizations are never held up
   * by a full one. Endpoints idle for a minute are forgotten.
   *
   * Nor does it take a sliver: while the roomiest active endpoint has room for less than a quarter
   * of its capacity, the events wait too (that endpoint's queue is then over half full; when it
   * drains to half, the endpoint wakes the loop). Otherwise, under a backlog, the loop fanned out
   * again as soon as a few sends had finished: fan-outs of a few dozen events, each a transaction
   * and a commit of its own (issue 30: 175 fan-outs per 10,000 deliveries on SQLite).
   */
  let fullSince: number | undefined;
  function fanOutLimit(): number {
    if (manual) return batchSize;
    const at = now();
    const free = Math.max(0, maxHeld - held);
    let active = false;
    let room = 0;
    let enough = 1;
    for (const [id, s] of states) {
      const load = s.queue.length + s.inFlight;
      if (load === 0 && at - s.takenAt > 1000) {
        if (at - s.takenAt > 60_000 && !s.timer) states.delete(id);
        continue;
      }
      active = true;
      const capacity = capacityOf(s.row);
      if (capacity - load > room) {
        room = capacity - load;
        enough = Math.max(1, Math.min(batchSize, capacity >> 2));
      }
    }
    if (!active) return Math.min(batchSize, concurrency * 16, free);
    if (room >= enough) {
      fullSince = undefined;
      return Math.min(batchSize, room, free);
    }
    fullSince ??= at;
    if (at - fullSince < 1000) return 0;
    fullSince = at;
    return Math.min(batchSize, free);
  }

  /** One round: fan out new events, claim due messages; returns how many messages it took on. */
  async function round(): Promise<{ fannedOut: number; taken: number }> {
    if (!manual) await refreshHeldEndpoints();
    if (rateLimitedSeen && now() - elsewhereReadAt >= 1000) {
      elsewhereReadAt = now();
      elsewhere = await endpointsHeldElsewhere(deps.db, workerId, now());
    }
    const provisional = new Map<string, number>();
    const limit = fanOutLimit();
    const fan = await fanOut(deps.db, deps.engine, now(), {
      workerId,
      leaseMs,
      limit,
      canTake: (row) => {
        if (elsewhere.has(row.id)) return false;
        const n = (provisional.get(row.id) ?? load(row.id)) + 1;
        if (n > capacityOf(row) || held + provisional.size > maxHeld) return false;
        provisional.set(row.id, n);
        return true;
      },
    });
    if (fan.events > 0) taken.fanOuts += 1;
    const fanned = await admit(fan.held, fan.endpoints);
    taken.atFanOut += fanned.length;
    enqueue(fanned, fan.endpoints);
    // Fresh events take the fan-out path above; the claim (retries, backlog, expired leases) scans
    // due rows, so it runs once per poll interval unless an endpoint just asked for more. Skipping a
    // saturated endpoint makes the claim read past all of that endpoint's due rows (its backlog),
    // so while one is saturated it runs at most once a second, or when an endpoint with room runs low.
    const skip = [...states.values()].filter(saturated).map((s) => s.row.id);
    for (const id of elsewhere) skip.push(id);
    const asked =
      claimSoon &&
      (skip.length === 0 ||
        [...states.values()].some((s) => !saturated(s) && s.queue.length <= capacityOf(s.row) >> 1));
    claimSoon = false;
    if (!manual && !asked && now() < nextClaimAt) return { fannedOut: fan.events, taken: fanned.length };
    // Expired leases (a crashed holder) are looked for at most once a second: a lease lasts far
    // longer, and that scan, unlike the one of due messages, reads every leased row.
    const expired = manual || now() >= nextExpiredAt;
    if (expired) nextExpiredAt = now() + Math.min(1000, leaseMs);
    const claimed = await claimDue(deps.db, deps.engine, now(), {
      workerId,
      leaseMs,
      limit: Math.min(batchSize, maxHeld - held),
      skipEndpoints: skip,
      expired,
    });
    let admitted: readonly HeldMessage[] = claimed;
    if (claimed.length > 0) {
      const rows = await loadEndpoints(
        deps.db,
        claimed.map((m) => m.endpointId),
      );
      admitted = await admit(claimed, rows);
      enqueue(admitted, rows);
    }
    taken.byClaim += admitted.length;
    const skipping = [...states.values()].some(saturated);
    // More may be due: claim again at once, unless that claim would have to skip an endpoint.
    claimSoon = claimed.length > 0 && !skipping;
    nextClaimAt = now() + (skipping ? Math.max(pollMs, 1000) : pollMs);
    return { fannedOut: fan.events, taken: fanned.length + admitted.length };
  }

  let running = !manual;
  let abandoned = false;
  let wake: (() => void) | undefined;
  let loop: Promise<void> = Promise.resolve();
  let heartbeat: NodeJS.Timeout | undefined;
  let pruner: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;

  return {
    workerId,
    /** How this process came to hold the messages it took on so far (tests, benchmarks). */
    stats: () => ({ ...taken }),
    /** Tests: everything due now, to the end (sends awaited, outcomes recorded). Rate-limited leftovers are given back. */
    async runOnce(): Promise<RoundSummary> {
      const before = { ...totals };
      let fannedOut = 0;
      for (let i = 0; i < 1000; i++) {
        const { fannedOut: f, taken } = await round();
        fannedOut += f;
        while (inFlight.size > 0) await Promise.all([...inFlight]);
        await flush();
        if (f === 0 && taken === 0) break;
      }
      if (dropped.length > 0) await flush();
      const leftovers: HeldMessage[] = [];
      let wait = 0;
      for (const state of states.values()) {
        if (state.queue.length > 0) wait = Math.max(wait, limiter.peek(state.row.id, state.row.rate_limit));
        leftovers.push(...state.queue.splice(0));
      }
      held -= leftovers.length;
      if (leftovers.length > 0) await releaseHeld(deps.db, workerId, leftovers, now() + Math.max(wait, 1), now());
      if (ownedUntil.size > 0) {
        ownedUntil.clear();
        await releaseEndpoints(deps.db, workerId);
      }
      return {
        fannedOut,
        attempted: totals.attempted - before.attempted,
        succeeded: totals.succeeded - before.succeeded,
        failed: totals.failed - before.failed,
        exhausted: totals.exhausted - before.exhausted,
      };
    },
    start(): void {
      running = true;
      unsubscribe = eventsPublished.subscribe(() => wake?.());
      heartbeat = setInterval(
        () => {
          for (const [hold, since] of stuck) if (now() - since > 2 * leaseMs) stuck.delete(hold);
          if (held > 0)
            extendLeases(deps.db, deps.engine, workerId, now() + leaseMs, [...stuck.keys()]).catch((error: unknown) =>
              deps.log.error({ err: error }, 'could not extend webhook leases'),
            );
          const keep = [...ownedUntil.keys()].filter((id) => load(id) > 0);
          if (keep.length > 0) {
            const until = now() + leaseMs;
            renewEndpoints(deps.db, workerId, keep, until).then(
              () => {
                for (const id of keep) ownedUntil.set(id, until);
              },
              (error: unknown) => deps.log.error({ err: error }, 'could not renew webhook endpoint leases'),
            );
          }
        },
        Math.max(250, Math.floor(leaseMs / 4)),
      );
      heartbeat.unref();
      pruner = setInterval(() => {
        pruneDeliveryLog(deps.db, now()).catch((error: unknown) =>
          deps.log.error({ err: error }, 'could not prune the webhook delivery log'),
        );
      }, 3_600_000);
      pruner.unref();
      loop = (async () => {
        while (running) {
          let busy = false;
          try {
            const { fannedOut, taken } = await round();
            busy = fannedOut > 0 || taken > 0;
          } catch (error) {
            deps.log.error({ err: error }, 'webhook delivery round failed');
          }
          if (!running) break;
          if (busy && held < maxHeld) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              wake = undefined;
              resolve();
            }, pollMs);
            wake = () => {
              clearTimeout(timer);
              wake = undefined;
              resolve();
            };
          });
        }
      })();
    },
    async stop(): Promise<void> {
      running = false;
      wake?.();
      unsubscribe?.();
      clearInterval(heartbeat);
      clearInterval(pruner);
      await loop;
      const queued: HeldMessage[] = [];
      for (const state of states.values()) {
        clearTimeout(state.timer);
        queued.push(...state.queue.splice(0));
      }
      held -= queued.length;
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      await flush();
      if (queued.length > 0) await releaseHeld(deps.db, workerId, queued, now(), now()).catch(() => {});
      if (ownedUntil.size > 0) await releaseEndpoints(deps.db, workerId).catch(() => {});
      await agent?.close();
    },
    /** Stops without giving anything back (a crash, as far as the database can tell). */
    async abandon(): Promise<void> {
      running = false;
      abandoned = true;
      wake?.();
      unsubscribe?.();
      clearInterval(heartbeat);
      clearInterval(pruner);
      await loop;
      for (const state of states.values()) clearTimeout(state.timer);
      await agent?.destroy();
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}

export type DeliveryEngine = ReturnType<typeof createDeliveryEngine>;
