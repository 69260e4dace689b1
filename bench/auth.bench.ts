// Authentication over real loopback HTTP: new token (argon2id login), refresh (same refresh token, as the reference), expire
// (DELETE /v1/auth/token) and an authenticated GET /v1/user next to the unauthenticated
// GET /healthz, beside the original service's published averages. The per-request credential
// check (JWT + session row + principal) is also timed in-process, where its overhead is visible.
import { cpus, loadavg } from 'node:os';
import { Agent, request } from 'undici';
import { createOrganization, hashPassword } from '../src/features/identity/index.ts';
import { seedOrganizationMetadata } from '../src/features/metadata/index.ts';
import { principalForToken } from '../src/features/auth/index.ts';
import { fmt, measure, percentile, printTable, startBenchServer } from './lib.ts';

const loadBefore = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
const server = await startBenchServer(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {});
const agent = new Agent({ connections: 4 });
const username = `bench-${Date.now()}`;
const password = 'bench correct horse battery';
const now = server.deps.clock.now();
await server.deps.db.transaction().execute(async (trx) =>
  createOrganization(
    trx,
    now,
    {
      name: 'Bench',
      admin: { username, email: `${username}@example.test`, passwordHash: await hashPassword(password) },
    },
    seedOrganizationMetadata,
  ),
);

interface Session {
  session: { accessToken: string; refreshToken: string; authorization: string };
}
async function call(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await request(`${server.url}${path}`, {
    method,
    dispatcher: agent,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text);
}
const login = (): Promise<Session> => call('POST', '/v1/auth/token', { username, password });

const N_LOGIN = 400;
const N_REFRESH = 2000;
const N_EXPIRE = 500;
const N_GET = 3000;
const N_INPROC = 20_000;

const loginTimes = await measure(N_LOGIN, () => login(), { warmup: 5 });

let current = await login();
const refreshTimes = await measure(
  N_REFRESH,
  async () => {
    current = await call('POST', '/v1/auth/token', {
      accessToken: current.session.accessToken,
      refreshToken: current.session.refreshToken,
    });
  },
  { warmup: 20 },
);

const toExpire: Session[] = [];
for (let i = 0; i < N_EXPIRE + 20; i++) toExpire.push(await login());
let e = 0;
const expireTimes = await measure(
  N_EXPIRE,
  async () => {
    const s = toExpire[e++]!;
    await call('DELETE', '/v1/auth/token', s, { accesstoken: s.session.accessToken });
  },
  { warmup: 20 },
);

const live = await login();
const tokenHeaders = { accesstoken: live.session.accessToken };
const healthTimes = await measure(N_GET, () => call('GET', '/healthz'), { warmup: 200 });
const userTimes = await measure(N_GET, () => call('GET', '/v1/user', undefined, tokenHeaders), { warmup: 200 });

const deps = server.deps;
const inproc = await measure(N_INPROC, () => principalForToken(deps, live.session.accessToken), { warmup: 1000 });

const row = (name: string, times: number[], target: string, original: string) => [
  name,
  times.length,
  fmt(percentile(times, 50)),
  fmt(percentile(times, 99)),
  target,
  original,
];
printTable(
  `Authentication (${server.deps.engine}, loopback HTTP, sequential)`,
  ['operation', 'n', 'p50 ms', 'p99 ms', 'target p99', 'original avg'],
  [
    row('POST /v1/auth/token (new token, argon2id)', loginTimes, '≤ 60 ms', '3,671 ms'),
    row('POST /v1/auth/token (refresh)', refreshTimes, '≤ 10 ms', '233 ms'),
    row('DELETE /v1/auth/token (expire)', expireTimes, '≤ 10 ms', '288 ms'),
    row('GET /healthz (no auth, baseline)', healthTimes, '—', '—'),
    row('GET /v1/user (AccessToken)', userTimes, '—', '—'),
    [
      'auth overhead over HTTP (p50 GET /v1/user − p50 /healthz)',
      '—',
      fmt(percentile(userTimes, 50) - percentile(healthTimes, 50)),
      '—',
      '—',
      '—',
    ],
    row('credential check in-process (JWT + session row + principal)', inproc, '≤ 0.5 ms', '—'),
  ],
);

console.log(
  `\n${cpus().length} vCPU; load average before/after: ${loadBefore} / ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
await agent.close();
await server.close();
