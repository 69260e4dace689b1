import formbody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { clientIp } from '../../../core/http/authenticate.ts';
import { AppError, unauthorized } from '../../../core/http/errors.ts';
import { errorResponses } from '../../../core/http/responses.ts';
import { gonePage, passwordPage, pageSecurity, storyboardPage } from './page.ts';
import { addStoryboardSchemas } from '../storyboards.routes.ts';
import { TokenAssetParamsSchema, TokenParamsSchema, UnlockSchema } from '../storyboards.schemas.ts';
import {
  checkLinkPassword,
  isUnlocked,
  linkRendition,
  linkView,
  openLink,
  recordOpen,
  unlockProof,
  type OpenedLink,
} from './shares.service.ts';

const tags = ['storyboards'];
const Html = { description: 'HTML page', content: { 'text/html': { schema: Type.String() } } };
const COOKIE = 'tessera_sb';

function cookieOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE) return rest.join('=');
  }
  return undefined;
}

function sendHtml(reply: FastifyReply, status: number, html: string, csp: string) {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': csp,
      'cache-control': 'private, no-store',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-robots-tag': 'noindex, nofollow',
    })
    .send(html);
}

const pagePath = (token: string) => `/shared/storyboards/${token}`;

/**
 * The external face of a share link. The token is the only credential and opens only its story
 * board: the page, its JSON form, and renditions of the assets that view shows. Unknown, expired
 * and revoked tokens are all 404.
 */
export async function storyboardSharedRoutes(app: App, deps: Deps): Promise<void> {
  addStoryboardSchemas(app);
  await app.register(formbody);
  const config = { public: true };

  async function unlocked(request: FastifyRequest, token: string): Promise<OpenedLink | null> {
    const opened = await openLink(deps, token);
    return isUnlocked(deps, opened, cookieOf(request)) ? opened : null;
  }

  app.get(
    '/shared/storyboards/:token',
    {
      config,
      schema: {
        operationId: 'openStoryboardLink',
        tags,
        summary: 'The read-only HTML page of a share link',
        security: [],
        params: TokenParamsSchema,
        description:
          'An unknown, expired or revoked link (or a board no longer shared) is a 404: a page saying so for a browser (Accept: text/html), the JSON error otherwise.',
        response: { 200: Html, 401: Html, ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      const { token } = request.params;
      const security = pageSecurity();
      try {
        const opened = await unlocked(request, token);
        if (!opened) return sendHtml(reply, 401, passwordPage(`${pagePath(token)}/unlock`, security), security.csp);
        const view = await linkView(deps, opened, token);
        await recordOpen(deps, opened);
        return sendHtml(reply, 200, storyboardPage(view, `${pagePath(token)}/view`, security), security.csp);
      } catch (error) {
        // A person following a dead link gets a page that says so (still the same 404 for every cause); API clients keep the JSON error.
        if (error instanceof AppError && error.status === 404 && /text\/html/.test(request.headers.accept ?? ''))
          return sendHtml(reply, 404, gonePage(security), security.csp);
        throw error;
      }
    },
  );

  app.post(
    '/shared/storyboards/:token/unlock',
    {
      config,
      schema: {
        operationId: 'unlockStoryboardLink',
        tags,
        summary: 'Give the password of a protected link (form post); sets a cookie scoped to the link',
        security: [],
        params: TokenParamsSchema,
        body: UnlockSchema,
        response: {
          303: Type.Null({
            description: 'Unlocked: no body; the cookie is set and Location names the page',
            headers: {
              Location: { type: 'string', description: 'The page of the link (/shared/storyboards/{token})' },
              'Set-Cookie': { type: 'string', description: 'The unlock cookie, scoped to this link, HttpOnly' },
            },
          }),
          401: Html,
          ...errorResponses('bad_request', 'not_found', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const { token } = request.params;
      const opened = await openLink(deps, token);
      if (!(await checkLinkPassword(deps, opened, request.body.password, clientIp(request)))) {
        const security = pageSecurity();
        return sendHtml(
          reply,
          401,
          passwordPage(`${pagePath(token)}/unlock`, security, 'Wrong password'),
          security.csp,
        );
      }
      const secure = deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
      return reply
        .headers({
          'cache-control': 'no-store',
          'set-cookie': `${COOKIE}=${unlockProof(deps, opened)}; Path=${pagePath(token)}; HttpOnly; SameSite=Lax; Max-Age=43200${secure}`,
        })
        .redirect(pagePath(token), 303);
    },
  );

  app.get(
    '/shared/storyboards/:token/view',
    {
      config,
      schema: {
        operationId: 'viewStoryboardLink',
        tags,
        summary: 'The JSON form of a share link page (password links: after unlocking, or with X-Share-Password)',
        security: [],
        params: TokenParamsSchema,
        response: { 200: Type.Ref('StoryboardView'), ...errorResponses('unauthorized', 'not_found', 'rate_limited') },
      },
    },
    async (request, reply) => {
      const { token } = request.params;
      const opened = await openLink(deps, token);
      const header = request.headers['x-share-password'];
      const ok =
        isUnlocked(deps, opened, cookieOf(request)) ||
        (typeof header === 'string' && (await checkLinkPassword(deps, opened, header, clientIp(request))));
      if (!ok) throw unauthorized('This link needs its password');
      reply.header('cache-control', 'private, no-store');
      return linkView(deps, opened, token);
    },
  );

  app.get(
    '/shared/storyboards/:token/assets/:assetId/:rendition',
    {
      config,
      schema: {
        operationId: 'getStoryboardLinkRendition',
        tags,
        summary: 'A rendition of an asset shown by a share link',
        security: [],
        params: TokenAssetParamsSchema,
        response: {
          200: {
            description: 'The rendition',
            content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } },
          },
          ...errorResponses('unauthorized', 'not_found'),
        },
      },
    },
    async (request, reply) => {
      const { token, assetId, rendition } = request.params;
      const opened = await openLink(deps, token);
      if (!isUnlocked(deps, opened, cookieOf(request))) throw unauthorized('This link needs its password');
      const found = await linkRendition(deps, opened, token, assetId, rendition);
      reply.headers({
        'content-type': found.contentType,
        'cache-control': 'private, max-age=300',
        'x-content-type-options': 'nosniff',
      });
      if (found.etag) reply.header('etag', found.etag);
      if (found.size !== undefined) reply.header('content-length', String(found.size));
      return reply.send(found.body as never);
    },
  );
}
