// Per-endpoint delivery rate limit (`rateLimit`, messages per second) as a token bucket. The bucket
// holds a tenth of a second's worth of messages (at least 1), so short bursts stay small while the
// long-run rate is exact. In-memory, per process: across processes a rate-limited endpoint is
// delivered by one process at a time (delivery-engine/endpoint-owners.ts; docs/webhooks-delivery.md).

export interface RateLimiter {
  /**
   * Takes one slot for `endpointId` and returns 0 when the message may be sent now; otherwise takes
   * nothing and returns the milliseconds to wait before asking again. A rate that is not a positive
   * finite number means unlimited.
   */
  take(endpointId: string, ratePerSecond: number | null | undefined): number;
  /** Like take() but never takes a slot: 0 when a message could be sent now, else ms to wait. */
  peek(endpointId: string, ratePerSecond: number | null | undefined): number;
  /** Drops the state of one endpoint (deleted or reconfigured). */
  forget(endpointId: string): void;
  /** Endpoints currently tracked. */
  readonly size: number;
}

export interface RateLimiterOptions {
  /** Bucket size in seconds of traffic; default 0.1 (min 1 message). */
  burstSeconds?: number;
  /** Idle full buckets are swept once this many endpoints are tracked; default 10,000. */
  maxTracked?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
  rate: number;
  capacity: number;
}

export function createRateLimiter(now: () => number = Date.now, options: RateLimiterOptions = {}): RateLimiter {
  const burstSeconds = options.burstSeconds ?? 0.1;
  const maxTracked = options.maxTracked ?? 10_000;
  const buckets = new Map<string, Bucket>();

  const refill = (bucket: Bucket, at: number) => {
    const elapsed = Math.max(0, at - bucket.updatedAt);
    bucket.tokens = Math.min(bucket.capacity, bucket.tokens + (elapsed * bucket.rate) / 1000);
    bucket.updatedAt = Math.max(bucket.updatedAt, at);
  };

  const sweep = (at: number) => {
    for (const [id, bucket] of buckets) {
      refill(bucket, at);
      if (bucket.tokens >= bucket.capacity) buckets.delete(id); // a full bucket equals no bucket
    }
  };

  function acquire(endpointId: string, ratePerSecond: number | null | undefined, consume: boolean): number {
    if (typeof ratePerSecond !== 'number' || !Number.isFinite(ratePerSecond) || ratePerSecond <= 0) return 0;
    const at = now();
    const capacity = Math.max(1, ratePerSecond * burstSeconds);
    let bucket = buckets.get(endpointId);
    if (!bucket) {
      if (!consume) return 0; // an untracked endpoint has a full bucket
      if (buckets.size >= maxTracked) sweep(at);
      bucket = { tokens: capacity, updatedAt: at, rate: ratePerSecond, capacity };
      buckets.set(endpointId, bucket);
    } else {
      refill(bucket, at);
      if (bucket.rate !== ratePerSecond) {
        bucket.rate = ratePerSecond;
        bucket.capacity = capacity;
        bucket.tokens = Math.min(bucket.tokens, capacity);
      }
    }
    if (bucket.tokens >= 1) {
      if (consume) bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - bucket.tokens) * 1000) / bucket.rate));
  }

  return {
    take(endpointId, ratePerSecond) {
      return acquire(endpointId, ratePerSecond, true);
    },
    peek(endpointId, ratePerSecond) {
      return acquire(endpointId, ratePerSecond, false);
    },
    forget(endpointId) {
      buckets.delete(endpointId);
    },
    get size() {
      return buckets.size;
    },
  };
}

export interface InflightLimiter {
  /** True (and one slot taken) when `endpointId` has fewer than `max` deliveries in flight. */
  tryAcquire(endpointId: string, max?: number): boolean;
  /** Frees a slot taken by tryAcquire. */
  release(endpointId: string): void;
  inflight(endpointId: string): number;
}

/**
 * Caps concurrent deliveries per endpoint, so a slow or black-holed endpoint ties up at most
 * `defaultMax` of the worker's delivery slots (and sockets) while the others keep flowing.
 */
export function createInflightLimiter(defaultMax: number): InflightLimiter {
  const counts = new Map<string, number>();
  return {
    tryAcquire(endpointId, max = defaultMax) {
      const n = counts.get(endpointId) ?? 0;
      if (n >= max) return false;
      counts.set(endpointId, n + 1);
      return true;
    },
    release(endpointId) {
      const n = counts.get(endpointId) ?? 0;
      if (n <= 1) counts.delete(endpointId);
      else counts.set(endpointId, n - 1);
    },
    inflight(endpointId) {
      return counts.get(endpointId) ?? 0;
    },
  };
}
