import { randomBytes } from 'node:crypto';
import type { Deps } from '../../../deps.ts';
import { isUniqueViolation } from '../../../core/db/connect.ts';
import { createOrganization, type OrganizationSeed } from './organizations.service.ts';
import { hashPassword } from '../passwords/password.ts';

export type BootstrapResult =
  | { created: false }
  | { created: true; orgId: string; username: string; generatedPassword: string | undefined };

/**
 * On the first start against an empty database: the first organization and its administrator.
 * Runs once across restarts and across instances racing on one database (the marker row's
 * primary key decides who does it). `seed` is metadata's seedOrganizationMetadata (see createOrganization).
 */
export async function bootstrapFirstOrganization(deps: Deps, seed: OrganizationSeed): Promise<BootstrapResult> {
  const done = await deps.db
    .selectFrom('server_state')
    .select('key')
    .where('key', '=', 'bootstrapped')
    .executeTakeFirst();
  if (done) return { created: false };
  const username = deps.config.adminUsername ?? 'admin';
  const generatedPassword = deps.config.adminPassword ? undefined : randomBytes(18).toString('base64url');
  const passwordHash = await hashPassword(deps.config.adminPassword ?? generatedPassword!);
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('server_state')
        .values({ key: 'bootstrapped', value: String(now), updated_at: now })
        .execute();
      const existing = await trx.selectFrom('organizations').select('id').limit(1).executeTakeFirst();
      if (existing) return { created: false } as const;
      const org = await createOrganization(
        trx,
        now,
        {
          name: 'Default',
          admin: { username, email: `${username.includes('@') ? username : `${username}@localhost`}`, passwordHash },
        },
        seed,
      );
      return { created: true, orgId: org.orgId, username, generatedPassword } as const;
    });
  } catch (error) {
    if (isUniqueViolation(error)) return { created: false };
    throw error;
  }
}
