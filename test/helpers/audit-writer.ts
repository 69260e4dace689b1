// A process that writes audit rows as fast as it can, in transactions of ten, while sealing the
// chain concurrently, until it is killed (test: the chain survives a SIGKILL mid-write).
// Config from the environment like `tessera serve`; AUDIT_ORG names the organization.
import { parseConfig } from '../../src/config.ts';
import { audit } from '../../src/core/audit.ts';
import { createDeps } from '../../src/deps.ts';
import { sealOrg } from '../../src/features/audit/index.ts';

const deps = createDeps(parseConfig());
const orgId = process.env.AUDIT_ORG!;
let written = 0;
let sealed = 0;

async function write(): Promise<never> {
  for (;;) {
    await deps.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 10; i++) {
        await audit(trx, {
          orgId,
          at: Date.now(),
          actorId: null,
          action: 'test.write',
          targetType: 'thing',
          targetId: `thing-${written + i}`,
          operation: 'test',
          data: { n: written + i, text: 'x'.repeat(200) },
        });
      }
    });
    written += 10;
    process.send!({ written, sealed });
    // SQLite answers synchronously: yield so the sealer gets its turns.
    await new Promise((r) => setImmediate(r));
  }
}

async function seal(): Promise<never> {
  for (;;) {
    sealed += await sealOrg(deps.db, deps.engine, deps.keys, orgId);
    process.send!({ written, sealed });
    await new Promise((r) => setTimeout(r, 1));
  }
}

await Promise.all([write(), seal()]);
