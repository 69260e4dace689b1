import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from './config.ts';

describe('config', () => {
  it('has working defaults: SQLite and local disk under ./data, port 8080 on 127.0.0.1', () => {
    const config = parseConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.match(config.dataDir, /\/data$/);
    assert.equal(config.database.kind, 'sqlite');
    assert.equal(config.storage.kind, 'local');
    assert.equal(config.publicUrl, 'http://127.0.0.1:8080');
    assert.equal(config.workers, true);
    assert.equal(config.allowPrivateTargets, false);
    assert.ok(Object.isFrozen(config));
  });

  it('HTTP timeouts have finite defaults, are settable, and a headers timeout beyond the request timeout is refused', () => {
    const config = parseConfig({});
    assert.deepEqual(config.http, {
      headersTimeoutMs: 20_000,
      requestTimeoutMs: 300_000,
      idleTimeoutMs: 60_000,
      keepAliveTimeoutMs: 72_000,
    });
    assert.deepEqual(config.edge.http, { headersTimeoutMs: 20_000, requestTimeoutMs: 60_000, idleTimeoutMs: 65_000 });
    assert.equal(
      parseConfig({ TESSERA_REQUEST_TIMEOUT_MS: '1000', TESSERA_HEADERS_TIMEOUT_MS: '500' }).http.requestTimeoutMs,
      1000,
    );
    assert.throws(
      () => parseConfig({ TESSERA_REQUEST_TIMEOUT_MS: '1000', TESSERA_HEADERS_TIMEOUT_MS: '2000' }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'TESSERA_HEADERS_TIMEOUT_MS',
    );
    assert.throws(
      () => parseConfig({ EDGE_REQUEST_TIMEOUT_MS: '0' }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'EDGE_REQUEST_TIMEOUT_MS',
    );
  });

  it('reads PostgreSQL, S3 and the public URL', () => {
    const config = parseConfig({
      DATABASE_URL: 'postgres://u:p@db:5432/tessera',
      TESSERA_STORAGE: 's3://my-bucket/prefix?endpoint=http://127.0.0.1:9000&region=eu-west-1',
      TESSERA_PUBLIC_URL: 'https://dam.example.com/',
      PORT: '9000',
      HOST: '0.0.0.0',
    });
    assert.deepEqual(config.database, { kind: 'postgres', url: 'postgres://u:p@db:5432/tessera' });
    assert.equal(config.storage.kind, 's3');
    if (config.storage.kind === 's3') {
      assert.equal(config.storage.bucket, 'my-bucket');
      assert.equal(config.storage.prefix, 'prefix');
      assert.equal(config.storage.endpoint, 'http://127.0.0.1:9000');
      assert.equal(config.storage.region, 'eu-west-1');
    }
    assert.equal(config.publicUrl, 'https://dam.example.com');
    assert.equal(parseConfig({ HOST: '0.0.0.0', PORT: '9000' }).publicUrl, 'http://127.0.0.1:9000');
  });

  const bad: [Record<string, string>, string][] = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://h:99999/db' }, 'DATABASE_URL'],
    [{ TESSERA_STORAGE: 'ftp://x' }, 'TESSERA_STORAGE'],
    [{ TESSERA_STORAGE: 's3://Bad_Bucket' }, 'TESSERA_STORAGE'],
    [{ TESSERA_PUBLIC_URL: 'not a url' }, 'TESSERA_PUBLIC_URL'],
    [{ TESSERA_PUBLIC_URL: 'ftp://x' }, 'TESSERA_PUBLIC_URL'],
    [{ TESSERA_ADMIN_PASSWORD: 'short' }, 'TESSERA_ADMIN_PASSWORD'],
    [{ TESSERA_ADMIN_USERNAME: 'has space' }, 'TESSERA_ADMIN_USERNAME'],
    [{ TESSERA_SECRET_KEY: 'tooshort' }, 'TESSERA_SECRET_KEY'],
    [{ TESSERA_WORKERS: 'maybe' }, 'TESSERA_WORKERS'],
    [{ TESSERA_LOG_LEVEL: 'loud' }, 'TESSERA_LOG_LEVEL'],
    [{ EDGE_WORKERS: '2', EDGE_CONTROL_URL: 'http://edge.internal:9000' }, 'EDGE_CONTROL_URL'],
    [{ EDGE_CPU_AFFINITY: 'always' }, 'EDGE_CPU_AFFINITY'],
  ];
  for (const [env, variable] of bad) {
    it(`rejects a bad ${variable} (${Object.values(env)[0]}) naming the variable`, () => {
      assert.throws(
        () => parseConfig(env),
        (error: unknown) =>
          error instanceof ConfigError && error.variable === variable && error.message.includes(variable),
      );
    });
  }
});
