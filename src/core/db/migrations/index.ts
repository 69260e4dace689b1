import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_foundation.ts';
import * as m0002 from './0002_auth.ts';
import * as m0003 from './0003_api_keys.ts';
import * as m0004 from './0004_webhooks.ts';
import * as m0005 from './0005_security.ts';
import * as m0006 from './0006_compat.ts';
import * as m0007 from './0007_metadata.ts';
import * as m0008 from './0008_assets.ts';
import * as m0009 from './0009_search.ts';
import * as m0010 from './0010_storyboards.ts';
import * as m0011 from './0011_cdn.ts';
import * as m0012 from './0012_hotpaths.ts';
import * as m0014 from './0014_template_types.ts';
import * as m0016 from './0016_assets2.ts';
import * as m0017 from './0017_content_revision.ts';
import * as m0018 from './0018_webhook_fanout_queue.ts';
import * as m0019 from './0019_content_notify_stripe.ts';
import * as m0020 from './0020_webhook_log_without_fk.ts';
import * as m0021 from './0021_fair_jobs_mail_limits.ts';
import * as m0022 from './0022_webhook_target_auth.ts';
import * as m0023 from './0023_media_meta.ts';
import * as m0024 from './0024_audit_chain.ts';
import * as m0025 from './0025_asset_shares.ts';
import * as m0026 from './0026_delivery_presets.ts';
import * as m0027 from './0027_sso.ts';
import * as m0029 from './0029_quotas.ts';
import * as m0030 from './0030_usage_rights.ts';
import * as m0031 from './0031_upload_assembled.ts';
import * as m0033 from './0033_asset_content_links.ts';
import * as m0034 from './0034_scim.ts';
import * as m0036 from './0036_rights_settings.ts';
import * as m0037 from './0037_user_invitations.ts';
import * as m0041 from './0041_webhook_endpoint_owners.ts';
import * as m0042 from './0042_job_request_ids.ts';
import * as m0043 from './0043_secret_key_ids.ts';
import * as m0050 from './0050_jobs_notify.ts';
import * as m0054 from './0054_job_trace_parents.ts';
import * as m0063 from './0063_org_usage_deltas.ts';
import * as m0064 from './0064_revisions_polled_not_notified.ts';
import * as m0068 from './0068_fanout_queue_leases.ts';
import * as m0069 from './0069_bulk_write_cost.ts';
import * as m0070 from './0070_index_by_row_version.ts';

/** Every migration, in order. Names sort lexically; never rename or edit one that has landed. */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_auth': m0002,
  '0003_api_keys': m0003,
  '0004_webhooks': m0004,
  '0005_security': m0005,
  '0006_compat': m0006,
  '0007_metadata': m0007,
  '0008_assets': m0008,
  '0009_search': m0009,
  '0010_storyboards': m0010,
  '0011_cdn': m0011,
  '0012_hotpaths': m0012,
  '0014_template_types': m0014,
  '0016_assets2': m0016,
  '0017_content_revision': m0017,
  '0018_webhook_fanout_queue': m0018,
  '0019_content_notify_stripe': m0019,
  '0020_webhook_log_without_fk': m0020,
  '0021_fair_jobs_mail_limits': m0021,
  '0022_webhook_target_auth': m0022,
  '0023_media_meta': m0023,
  '0024_audit_chain': m0024,
  '0025_asset_shares': m0025,
  '0026_delivery_presets': m0026,
  '0027_sso': m0027,
  '0029_quotas': m0029,
  '0030_usage_rights': m0030,
  '0031_upload_assembled': m0031,
  '0033_asset_content_links': m0033,
  '0034_scim': m0034,
  '0036_rights_settings': m0036,
  '0037_user_invitations': m0037,
  '0041_webhook_endpoint_owners': m0041,
  '0042_job_request_ids': m0042,
  '0043_secret_key_ids': m0043,
  '0050_jobs_notify': m0050,
  '0054_job_trace_parents': m0054,
  '0063_org_usage_deltas': m0063,
  '0064_revisions_polled_not_notified': m0064,
  '0068_fanout_queue_leases': m0068,
  '0069_bulk_write_cost': m0069,
  '0070_index_by_row_version': m0070,
};
