// Issue 28, item 10: the deployment files are linted here (their images cannot be pulled on this
// machine): deploy/compose.yaml, deploy/Dockerfile, deploy/nginx.conf and deploy/systemd/*.service
// name only settings Tessera reads, with values its configuration accepts, only real process roles
// and flags, the same shared settings on every process, and a proxy whose upstreams are the API services.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { parseConfig } from '../src/config.ts';
import { parseRole } from '../src/roles.ts';

const read = (path: string) => readFileSync(path, 'utf8');

/** Every environment variable Tessera's configuration reads (by its parsing helpers), and those of the S3 SDK. */
function knownSettings(): Set<string> {
  const names = new Set(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'NODE_ENV']);
  for (const match of read('src/config.ts').matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)) names.add(match[1]!);
  for (const match of read('src/config.ts').matchAll(/const name = '([A-Z][A-Z0-9_]+)'/g)) names.add(match[1]!);
  for (const match of read('src/config.ts').matchAll(/env\.([A-Z][A-Z0-9_]+)/g)) names.add(match[1]!);
  return names;
}

/** The example values of deploy/example.env, for ${VAR:?…} and ${VAR:-default} in compose.yaml. */
function exampleEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of read('deploy/example.env').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{([A-Z_][A-Z0-9_]*)(?::[?-]([^}]*))?\}/g, (_all, name: string, fallback?: string) => {
    if (vars[name] !== undefined) return vars[name]!;
    assert.ok(fallback !== undefined && !_all.includes(':?'), `deploy/example.env lacks ${name}`);
    return fallback!;
  });
}

describe('deployment files', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as {
    services: Record<
      string,
      { image?: string; command?: string[]; environment?: Record<string, string>; ports?: string[] }
    >;
  };
  const tessera = Object.entries(compose.services).filter(([, s]) => s.image === 'tessera:latest');
  const vars = exampleEnv();

  it('compose: every Tessera service runs a real role with valid flags and settings Tessera reads and accepts', () => {
    assert.deepEqual(tessera.map(([name]) => name).sort(), ['api-1', 'api-2', 'edge', 'worker']);
    const known = knownSettings();
    for (const [name, service] of tessera) {
      const [role, ...flags] = service.command ?? [];
      assert.ok(role === 'serve' || role === 'worker' || role === 'edge', `${name}: unknown role ${role}`);
      if (role !== 'edge') parseRole(role, flags);
      const env = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)]),
      );
      for (const key of Object.keys(env)) assert.ok(known.has(key), `${name}: ${key} is not a setting Tessera reads`);
      // The configuration accepts every value (what the process would do first at start).
      assert.doesNotThrow(() => parseConfig(env), `${name}: its settings are refused`);
      const config = parseConfig(env);
      assert.equal(config.database.kind, 'postgres', `${name}: PostgreSQL`);
      assert.equal(config.storage.kind, 's3', `${name}: S3`);
      assert.ok(config.metricsToken, `${name}: metrics on`);
    }
  });

  it('compose: the settings every process must share are shared', () => {
    const shared = ['DATABASE_URL', 'TESSERA_STORAGE', 'TESSERA_SECRET_KEY', 'TESSERA_PUBLIC_URL', 'AWS_ACCESS_KEY_ID'];
    for (const key of shared) {
      const values = new Set(tessera.map(([, s]) => s.environment?.[key]));
      assert.equal(values.size, 1, `${key} differs between services: ${[...values].join(' | ')}`);
      assert.ok([...values][0], `${key} is set`);
    }
    // Secrets come from the environment file, never written into the compose file.
    assert.match(String(tessera[0]![1].environment!.TESSERA_SECRET_KEY), /^\$\{TESSERA_SECRET_KEY:\?/);
    for (const key of Object.keys(vars)) assert.ok(read('deploy/compose.yaml').includes(`\${${key}`), `${key} unused`);
  });

  it("nginx: the upstreams are exactly the compose file's API services, on their port", () => {
    const upstreams = [...read('deploy/nginx.conf').matchAll(/^\s*server\s+([\w.-]+):(\d+)/gm)].map(
      (m) => `${m[1]}:${m[2]}`,
    );
    const apis = tessera.filter(([, s]) => s.command?.[0] === 'serve').map(([name]) => `${name}:8080`);
    assert.deepEqual(upstreams.sort(), apis.sort());
    assert.equal(compose.services.proxy?.ports?.[0], '8080:8080');
  });

  it('Dockerfile: what it copies exists, it starts bin/tessera.mjs, and it exposes the port it sets', () => {
    const text = read('deploy/Dockerfile');
    for (const m of text.matchAll(/^COPY (?!--from)(.+) (\S+)$/gm))
      for (const source of m[1]!.split(/\s+/)) assert.ok(existsSync(source), `COPY ${source}: missing`);
    assert.match(text, /^ENTRYPOINT \[.*"bin\/tessera\.mjs"\]$/m);
    assert.match(text, /^CMD \["serve"\]$/m);
    const port = /PORT=(\d+)/.exec(text)?.[1];
    assert.match(text, new RegExp(`^EXPOSE ${port}$`, 'm'));
    const ignored = read('.dockerignore');
    for (const path of ['node_modules', '.git', 'data'])
      assert.ok(ignored.split('\n').includes(path), `.dockerignore: ${path}`);
  });

  it('systemd: each unit starts a real role with valid flags from the shared environment file', () => {
    const units = readdirSync('deploy/systemd').filter((f) => f.endsWith('.service'));
    assert.ok(units.length >= 4);
    for (const unit of units) {
      const text = read(`deploy/systemd/${unit}`);
      const exec = /^ExecStart=\S+ \S+bin\/tessera\.mjs (.+)$/m.exec(text);
      assert.ok(exec, `${unit}: ExecStart runs bin/tessera.mjs`);
      const [role, ...flags] = exec[1]!.split(' ');
      assert.ok(role === 'serve' || role === 'worker' || role === 'edge', `${unit}: role ${role}`);
      if (role !== 'edge') parseRole(role, flags);
      assert.match(text, /^EnvironmentFile=\/etc\/tessera\/tessera\.env$/m, unit);
      assert.match(text, /^KillSignal=SIGTERM$/m, unit);
      assert.match(text, /^RestartPreventExitStatus=2$/m, unit);
      for (const m of text.matchAll(/^Environment=(.+)$/gm))
        for (const pair of m[1]!.split(' ')) assert.ok(knownSettings().has(pair.split('=')[0]!), `${unit}: ${pair}`);
    }
  });
});
