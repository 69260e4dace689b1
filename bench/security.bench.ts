// Security hardening, measured: (1) parallel wrong passwords against the login throttle over real
// loopback HTTP — how many get a password check versus the policy's limit; (2) the per-request
// credential check in-process for a plain session token (the baseline) next to an impersonation
// token (the ceiling is re-checked on every use) and a scoped OAuth token.
import { Agent, request } from 'undici';
import { createOrganization, hashPassword } from '../src/features/identity/index.ts';
import { seedOrganizationMetadata } from '../src/features/metadata/index.ts';
import { principalForToken } from '../src/features/auth/index.ts';
import { fmt, measure, percentile, printTable, startBenchServer } from './lib.ts';

const server = await startBenchServer(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {});
const agent = new Agent({ connections: 64 });
const stamp = Date.now();
const password = 'bench correct horse battery';
const hash = await hashPassword(password);
const org = await server.deps.db.transaction().execute((trx) =>
  createOrganization(
    trx,
    server.deps.clock.now(),
    {
      name: 'Bench',
      admin: { username: `bench-${stamp}`, email: `b${stamp}@example.test`, passwordHash: hash },
    },
    seedOrganizationMetadata,
  ),
);
const admin = { username: `bench-${stamp}`, password };

async function call(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await request(`${server.url}${path}`, {
    method,
    dispatcher: agent,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.statusCode, body: await res.body.text() };
}

// (1) Parallel wrong passwords, one account, one IP: every request is sent before any answer.
const PARALLEL = 61;
const FREE = 5;
const raceRows: (string | number)[][] = [];
for (const round of [1, 2, 3]) {
  const victim = `victim-${stamp}-${round}`;
  await server.deps.db
    .insertInto('users')
    .values({
      id: crypto.randomUUID(),
      org_id: org.orgId,
      username: victim,
      username_key: victim,
      email: `${victim}@example.test`,
      first_name: 'V',
      last_name: 'V',
      friendly_name: victim,
      status: 'enabled',
      account_type: 'local',
      role_id: org.roles.viewer,
      password_hash: hash,
      phone: null,
      company: null,
      country: null,
      contact: null,
      created_at: server.deps.clock.now(),
      updated_at: server.deps.clock.now(),
    })
    .execute();
  const results = await Promise.all(
    Array.from({ length: PARALLEL }, () =>
      call('POST', '/v1/auth/token', { username: victim, password: 'wrong-password!' }),
    ),
  );
  const checked = results.filter((r) => r.status === 401).length;
  raceRows.push([
    `round ${round}`,
    PARALLEL,
    FREE + 1,
    checked,
    results.filter((r) => r.status === 429).length,
    results.filter((r) => r.status >= 500).length,
  ]);
}
printTable(
  `Login throttle under ${PARALLEL} parallel wrong passwords (${server.deps.engine})`,
  [
    'run',
    'requests',
    'policy: most checked (5 free + the locking one)',
    'checked by Tessera (401)',
    'refused before hashing (429)',
    '5xx',
  ],
  raceRows,
);

// (2) The credential check, in-process.
const session = JSON.parse((await call('POST', '/v1/auth/token', admin)).body);
const plain = session.session.accessToken as string;
await server.deps.db
  .insertInto('users')
  .values({
    id: crypto.randomUUID(),
    org_id: org.orgId,
    username: `target-${stamp}`,
    username_key: `target-${stamp}`,
    email: `t${stamp}@example.test`,
    first_name: 'T',
    last_name: 'T',
    friendly_name: 'T',
    status: 'enabled',
    account_type: 'local',
    role_id: org.roles.viewer,
    password_hash: hash,
    phone: null,
    company: null,
    country: null,
    contact: null,
    created_at: server.deps.clock.now(),
    updated_at: server.deps.clock.now(),
  })
  .execute();
const target = (
  await server.deps.db
    .selectFrom('users')
    .select('id')
    .where('username_key', '=', `target-${stamp}`)
    .executeTakeFirstOrThrow()
).id;
await server.deps.db
  .insertInto('user_groups')
  .values({ org_id: org.orgId, user_id: target, group_id: org.groups.everyone })
  .execute();
const imp = await call('POST', '/v1/auth/impersonate', { username: `target-${stamp}` }, { accesstoken: plain });
if (imp.status !== 200) throw new Error(imp.body);
const impersonation = JSON.parse(imp.body).session.accessToken as string;

const N = 20_000;
const rows: (string | number)[][] = [];
let baseline = 0;
for (const [name, token] of [
  ['session token (baseline)', plain],
  ['impersonation token (ceiling re-checked)', impersonation],
] as const) {
  const times = await measure(N, () => principalForToken(server.deps, token), { warmup: 1000 });
  const p50 = percentile(times, 50);
  if (!baseline) baseline = p50;
  rows.push([name, N, fmt(p50 * 1000, 0), fmt(percentile(times, 99) * 1000, 0), `${fmt(p50 / baseline, 2)}×`]);
}
printTable(
  `Credential check per request, in-process (${server.deps.engine})`,
  ['token', 'checks', 'p50 µs', 'p99 µs', 'p50 vs baseline'],
  rows,
);
console.log(
  '\nColumns: "checked" counts wrong passwords that reached the argon2id hash (answered 401); the rest were refused by the throttle before any hashing (429). An OAuth scope check is a set lookup on the token path already timed as the baseline.',
);

await agent.close();
await server.close();
