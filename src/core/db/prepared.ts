import { createQueryId, type CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Hot queries compiled once. Kysely builds an operation tree and compiles it to SQL on every call;
 * on a hot path (credential check, current user, asset by id, permission checks) that is a
 * seventh of the request. `prepared` builds the query once per engine with a placeholder standing
 * for each parameter, compiles it, and from then on only substitutes the values. With the same SQL
 * text every time, SQLite's statement cache (connect.ts) also skips parse and plan.
 *
 *   const findThing = prepared<{ orgId: string; id: string }>()((db, p) =>
 *     db.selectFrom('things').selectAll().where('org_id', '=', p.orgId).where('id', '=', p.id));
 *   const row = (await findThing.execute(deps.db, { orgId, id }))[0];
 *
 * Rules: a parameter may be used any number of times, but only as a value (never spliced into
 * SQL text with sql.raw/sql.lit, and never as an `in` list whose length varies: build those per
 * call). The builder must not branch on parameter values. Works on a Kysely or a transaction.
 */
type Slots<P> = { readonly [K in keyof P]: P[K] };

interface Executor {
  getExecutor(): { adapter: object };
  executeQuery<R>(query: CompiledQuery<R>): Promise<{ rows: R[] }>;
}

export interface PreparedQuery<P, R> {
  execute(db: Executor, params: P): Promise<R[]>;
  /** The compiled SQL for `db`'s engine (tests look at its plan). */
  compiled(db: Executor): CompiledQuery<R>;
}

let slotCounter = 0;

export function prepared<P extends Record<string, unknown>>() {
  return <R>(build: (db: Kysely<Database>, params: Slots<P>) => Compilable<R>): PreparedQuery<P, R> => {
    // One compiled form per engine (keyed by the dialect adapter, shared by transactions).
    const byAdapter = new WeakMap<object, { query: CompiledQuery<R>; plan: (params: P) => unknown[] }>();
    const compile = (db: Executor) => {
      const adapter = db.getExecutor().adapter;
      let entry = byAdapter.get(adapter);
      if (!entry) {
        const markers = new Map<string, string>();
        const slots = new Proxy({} as Slots<P>, {
          get(_target, key: string) {
            let marker = markers.get(key);
            if (!marker) markers.set(key, (marker = `\u0000slot${++slotCounter}:${key}`));
            return marker;
          },
        });
        const query = build(db as unknown as Kysely<Database>, slots).compile();
        const byMarker = new Map([...markers].map(([k, m]) => [m, k]));
        // For each parameter position: the name of the value to put there, or the constant itself.
        const positions = query.parameters.map((value) =>
          typeof value === 'string' && byMarker.has(value)
            ? { name: byMarker.get(value)!, value: undefined }
            : { name: undefined, value },
        );
        for (const [key, marker] of markers) {
          if (!query.parameters.includes(marker))
            throw new Error(`prepared query: parameter "${key}" was not used as a value`);
          if (query.sql.includes(marker))
            throw new Error(`prepared query: parameter "${key}" was spliced into the SQL text`);
        }
        entry = {
          query,
          plan: (params) => positions.map((p) => (p.name !== undefined ? params[p.name] : p.value)),
        };
        byAdapter.set(adapter, entry);
      }
      return entry;
    };
    return {
      async execute(db, params) {
        const { query, plan } = compile(db);
        const result = await db.executeQuery<R>({ ...query, parameters: plan(params), queryId: createQueryId() });
        return result.rows;
      },
      compiled: (db) => compile(db).query,
    };
  };
}
