import { Type } from 'typebox';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import type { Deps } from '../../../deps.ts';
import { getRightsSettings, updateRightsSettings } from './rights-settings.ts';
import { EXPIRED_DOWNLOAD_MODES } from './gate.ts';

const tags = ['quotas'];

const Mode = Type.Union(
  [
    Type.Literal(EXPIRED_DOWNLOAD_MODES[0]),
    Type.Literal(EXPIRED_DOWNLOAD_MODES[1]),
    Type.Literal(EXPIRED_DOWNLOAD_MODES[2]),
  ],
  {
    description:
      'Downloads of an asset whose usage right has expired or not started: allow (as before, the default), block (403 rights_expired for the original and renditions above preview size; thumbnails and previews stay), watermark (images are served with "Usage rights expired" drawn across them; other files are refused as under block). Holders of Quota Management or Content Management download as before',
  },
);
const Settings = Type.Object({
  expiredDownloads: Mode,
  updatedEpoch: Type.Union([Type.Integer(), Type.Null()], {
    description: 'epoch ms of the last change, null if never set',
  }),
});

/** The organization's usage-rights settings (docs/usage-rights.md). Mounted under /v1. */
export function rightsRoutes(app: App, deps: Deps): void {
  app.get(
    '/rights/settings',
    {
      schema: {
        operationId: 'GetRightsSettings',
        tags,
        summary: "The organization's usage-rights settings: what happens to downloads of assets out of rights",
        response: { 200: Settings, ...errorResponses(...AUTHENTICATED_ERRORS, 'forbidden') },
      },
    },
    async (request) => getRightsSettings(deps, principalOf(request)),
  );
  app.patch(
    '/rights/settings',
    {
      schema: {
        operationId: 'UpdateRightsSettings',
        tags,
        summary:
          "Sets the organization's usage-rights settings (Quota Management); applies at once to every download and to links already handed out",
        body: Type.Object({ expiredDownloads: Mode }, { additionalProperties: false }),
        response: { 200: Settings, ...errorResponses(...AUTHENTICATED_ERRORS, 'validation_failed', 'forbidden') },
      },
    },
    async (request) => updateRightsSettings(deps, principalOf(request), request.body.expiredDownloads),
  );
}
