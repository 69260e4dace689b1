import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../deps.ts';
import type { App } from '../../core/http/app-types.ts';
import { notFound } from '../../core/http/errors.ts';

/** Where `vite build` (the root `prepare` script, run by `npm ci`) writes the app. */
export const WEB_APP_DIST = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

interface StaticFile {
  body: Buffer;
  type: string;
  immutable: boolean;
}

/** Every built file in memory (the app is a few hundred KB): no disk read per request, no path to escape. */
function loadFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!existsSync(dir)) return files;
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const rel = relative(dir, path).split(sep).join('/');
        // Vite puts content hashes in the names under assets/: those never change.
        files.set(rel, {
          body: readFileSync(path),
          type: TYPES[extname(name)] ?? 'application/octet-stream',
          immutable: rel.startsWith('assets/'),
        });
      }
    }
  };
  walk(dir);
  return files;
}

function origin(url: string | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

/**
 * The app's Content-Security-Policy: scripts and styles only from our own files (no inline code, no
 * eval), images and requests only to us (and to the object store, where uploads and downloads go
 * when storage is S3), nothing from anywhere else, no framing.
 */
export function webAppCsp(deps: Deps): string {
  const own = ["'self'", origin(deps.config.publicUrl)];
  const storage =
    deps.config.storage.kind === 's3'
      ? origin(deps.config.storage.endpoint) ||
        `https://${deps.config.storage.bucket}.s3.${deps.config.storage.region}.amazonaws.com`
      : '';
  const list = (values: string[]) => [...new Set(values.filter(Boolean))].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${list([...own, storage, 'blob:', 'data:'])}`,
    `media-src ${list([...own, storage, 'blob:'])}`,
    `connect-src ${list([...own, storage])}`,
    "font-src 'self'",
    "manifest-src 'self'",
    "worker-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Tessera</title>
<h1>The web app is not built</h1><p>Run <code>npm run build:web</code> (it runs during <code>npm ci</code>), then restart Tessera.</p></html>`;

/** GET / → /app/, and the built single-page app under /app/ (any other path under it is the app's own route). */
export function webAppRoutes(app: App, deps: Deps, dir = WEB_APP_DIST): void {
  const files = loadFiles(dir);
  const csp = webAppCsp(deps);
  const tags = ['web-app'];

  const send = (reply: FastifyReply, file: StaticFile | undefined) => {
    reply.headers({
      'content-security-policy': csp,
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'cross-origin-opener-policy': 'same-origin',
    });
    if (!file)
      return reply.code(503).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(NOT_BUILT);
    reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    return reply.code(200).type(file.type).send(file.body);
  };

  app.get(
    '/',
    {
      config: { public: true },
      schema: {
        operationId: 'GetRoot',
        tags,
        summary: 'Redirects to the web app at /app/',
        security: [],
        response: { 302: Type.Null({ description: 'To /app/' }) },
      },
    },
    async (_request, reply) => reply.redirect('/app/', 302),
  );

  app.get(
    '/app',
    {
      config: { public: true },
      schema: {
        operationId: 'GetWebApp',
        tags,
        summary: 'The web app (HTML)',
        security: [],
        response: {
          200: Type.String({ description: 'The app page' }),
          503: Type.String({ description: 'The app was not built' }),
        },
      },
    },
    async (_request, reply) => send(reply, files.get('index.html')),
  );

  app.get(
    '/app/*',
    {
      config: { public: true },
      schema: {
        operationId: 'GetWebAppFile',
        tags,
        summary: "The web app's files; any other path is one of the app's pages (its HTML)",
        security: [],
        params: Type.Object({ '*': Type.String({ maxLength: 500 }) }),
        response: {
          200: Type.String({ description: 'A file of the app, or the app page' }),
          404: Type.Ref('Error'),
          503: Type.String({ description: 'The app was not built' }),
        },
      },
    },
    async (request, reply) => {
      const path = request.params['*'];
      const file = files.get(path);
      if (file) return send(reply, file);
      // A missing hashed file is a real 404 (an old page asking for a file of an older build), not the page.
      if (path.startsWith('assets/') || extname(path) !== '') throw notFound('File of the web app');
      return send(reply, files.get('index.html'));
    },
  );
}
