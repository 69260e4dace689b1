import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { contentDisposition } from '../../../core/http/content-disposition.ts';
import { notFound } from '../../../core/http/errors.ts';
import { isMediaType } from '../upload/content-types.ts';

export interface Servable {
  key: string;
  size: number;
  contentType: string;
  etag: string;
  lastModified: number;
  cacheControl: string;
  /** Sent as a download (Content-Disposition: attachment) under this name. */
  downloadName?: string;
}

/** Parses one `bytes=a-b` range; multi-range requests are answered with the whole body. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/** Streams a stored object with ETag, Last-Modified, conditional requests, Range and Cache-Control. */
export async function serveBlob(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  item: Servable,
  beforeBytes?: (range: { start: number; end: number } | null) => Promise<void>,
): Promise<FastifyReply> {
  const lastModified = new Date(Math.floor(item.lastModified / 1000) * 1000);
  reply
    .header('etag', item.etag)
    .header('last-modified', lastModified.toUTCString())
    .header('cache-control', item.cacheControl)
    .header('accept-ranges', 'bytes');
  reply.header('x-content-type-options', 'nosniff');
  if (item.downloadName) reply.header('content-disposition', contentDisposition(item.downloadName));
  const inm = request.headers['if-none-match'];
  const ims = request.headers['if-modified-since'];
  if (
    (inm &&
      inm
        .split(',')
        .map((s) => s.trim())
        .includes(item.etag)) ||
    (!inm && ims && Date.parse(ims) >= lastModified.getTime())
  ) {
    return reply.code(304).send();
  }
  const ifRange = request.headers['if-range'];
  const range = ifRange && ifRange !== item.etag ? null : parseRange(request.headers.range, item.size);
  if (range === 'unsatisfiable') {
    reply.header('content-range', `bytes */${item.size}`);
    return reply
      .code(416)
      .type('application/json; charset=utf-8')
      .send({
        status: 'error',
        code: 'range_not_satisfiable',
        message: `Range Not Satisfiable: the content has ${item.size} bytes`,
        requestId: request.id,
      });
  }
  const stream = await deps.blobs.get(item.key, range ?? undefined);
  if (!stream) throw notFound('Content');
  if (beforeBytes) {
    try {
      await beforeBytes(range);
    } catch (error) {
      stream.destroy?.();
      throw error;
    }
  }
  // A type stored before media types were checked could hold anything: it is never sent as a header.
  reply.type(isMediaType(item.contentType) ? item.contentType : 'application/octet-stream');
  if (range) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${item.size}`)
      .header('content-length', range.end - range.start + 1);
  } else {
    reply.header('content-length', item.size);
  }
  return reply.send(stream);
}
