import multipart, { type Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { docAs } from '../../../core/http/doc-schema.ts';
import type { Deps } from '../../../deps.ts';
import type { App } from '../../../core/http/app-types.ts';
import { principalOf } from '../../../core/http/authenticate.ts';
import { AppError, invalidField } from '../../../core/http/errors.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../../../core/http/responses.ts';
import { CreateResponseSchema } from '../assets.schemas.ts';
import { createAsset } from '../assets.service.ts';
import { receiveSingle } from './uploads.service.ts';
import { verifyContentType } from './content-types.ts';
import { HeadKeeper } from './upload-streams.ts';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { bag } from '../../../core/lookup.ts';

const tags = ['assets'];

function parseList(value: string | undefined, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text.startsWith('[')) {
    try {
      const list = JSON.parse(text);
      if (Array.isArray(list) && list.every((x) => typeof x === 'string')) return list;
    } catch {
      // fall through
    }
    throw invalidField(field, 'must be a JSON array of ids or a comma-separated list');
  }
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const UploadFormBody = docAs(Type.Any({ description: 'multipart/form-data' }), {
  type: 'object',
  description: 'The fields first, then the file part',
  required: ['file'],
  properties: {
    metadataTemplateId: {
      type: 'string',
      description: 'Metadata template of the new asset (required unless originalFileId)',
    },
    securityTemplateIds: {
      type: 'string',
      description: 'Security templates: a JSON array or comma-separated ids (required unless originalFileId)',
    },
    metadata: {
      type: 'string',
      description: 'The legacy metadata document as JSON text ([{metadataDefinitionId, metadataDefinitionValue}])',
    },
    filename: { type: 'string', description: "The file's name (default: the file part's own)" },
    originalFileId: {
      type: 'string',
      description:
        'Present: the file is a new version of that asset (then metadataTemplateId and securityTemplateIds are inherited)',
    },
    overwriteEmbeddedMetadata: {
      type: 'string',
      enum: ['true', 'false'],
      description: 'Embedded IPTC, XMP and EXIF fields replace attribute values already set',
    },
    onDuplicate: {
      type: 'string',
      enum: ['report', 'refuse', 'version'],
      description: 'What to do when the organization already holds these bytes',
    },
    checksum: { type: 'string', description: 'SHA-256 of the file (hex)' },
    file: {
      type: 'string',
      format: 'binary',
      description: "The file, sent last (up to the part size); its part's Content-Type is checked against its bytes",
    },
  },
});

/** The direct form upload: create an asset and send its (small) file in one multipart/form-data request. */
export function uploadFormRoutes(app: App, deps: Deps): void {
  // A small file in one request: the asset's fields, then the file, as multipart/form-data.
  app.register(async (scope: App) => {
    await scope.register(multipart, {
      limits: { files: 1, fields: 20, fieldSize: 1_048_576, fileSize: deps.config.uploadPartSizeBytes },
    });
    scope.post(
      '/asset/upload',
      {
        schema: {
          operationId: 'UploadAsset',
          tags,
          summary:
            'Create an asset and upload its file in one multipart/form-data request (fields first, then the file; up to the part size)',
          consumes: ['multipart/form-data'],
          body: UploadFormBody,
          response: {
            200: CreateResponseSchema,
            ...errorResponses(
              ...AUTHENTICATED_ERRORS,
              'validation_failed',
              'forbidden',
              'not_found',
              'conflict',
              'payload_too_large',
              'unsupported_media_type',
            ),
          },
        },
      },
      async (request) => {
        if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send multipart/form-data');
        const principal = principalOf(request);
        const fields = bag<string>();
        for await (const part of wellFormedParts(request)) {
          if (part.type === 'field') {
            fields[part.fieldname] = String(part.value);
            continue;
          }
          let metadata: unknown;
          if (fields.metadata !== undefined) {
            try {
              metadata = JSON.parse(fields.metadata);
            } catch {
              part.file.resume();
              throw invalidField('body.metadata', 'must be JSON');
            }
          }
          const securityTemplateIds = parseList(fields.securityTemplateIds, 'body.securityTemplateIds');
          const filename = fields.filename ?? part.filename;
          // The whole file is received (and checked) before anything is created: a refused request
          // (too large, wrong checksum, bytes contradicting the type) leaves no asset, version or blob.
          const staged = await stageFile(deps, part.file, deps.config.uploadPartSizeBytes);
          try {
            if (fields.checksum !== undefined && fields.checksum.toLowerCase() !== staged.sha256) {
              throw invalidField(
                'body.checksum',
                `the SHA-256 of the content (${staged.sha256}) does not match the declared checksum; nothing was kept`,
              );
            }
            const type = verifyContentType(staged.head, part.mimetype, filename);
            if ('problem' in type) throw invalidField('header.content-type', `${type.problem}; nothing was kept`);
            // The staged bytes' SHA-256 stands for the checksum: duplicates are known (and refused or versioned) before anything is created.
            const created = await createAsset(
              deps,
              principal,
              {
                metadataTemplateId: fields.metadataTemplateId,
                securityTemplateIds,
                metadata,
                filename,
                contentType: part.mimetype,
                checksum: fields.checksum ?? staged.sha256,
                // The size is known: the storage quota is checked (and the bytes counted) before anything is created.
                filesize: staged.size,
                originalFileId: fields.originalFileId,
                overwriteEmbeddedMetadata: flag(fields.overwriteEmbeddedMetadata, 'body.overwriteEmbeddedMetadata'),
                onDuplicate: duplicateOption(fields.onDuplicate),
              },
              'legacy',
            );
            await receiveSingle(deps, created.uploadRowId!, createReadStream(staged.path), part.mimetype, undefined);
            const { asset } = created;
            return {
              filename: asset.filename,
              objectId: asset.id,
              fileId: asset.file_id,
              originalFileId: asset.original_file_id,
              versionNumber: asset.version_number,
              duplicates: created.duplicates ?? [],
            };
          } finally {
            await staged.discard();
          }
        }
        throw invalidField('body.file', 'is required (a file part after the fields)');
      },
    );
  });
}

function flag(value: string | undefined, field: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  throw invalidField(field, 'must be true or false');
}

function duplicateOption(value: string | undefined): 'report' | 'refuse' | 'version' | undefined {
  if (value === undefined || value === 'report' || value === 'refuse' || value === 'version') return value;
  throw invalidField('body.onDuplicate', 'must be report, refuse or version');
}

/**
 * Receives a form's file part into a private temporary file, hashing it and keeping its first
 * bytes. Past `maxBytes` (the parser truncates there) it is a 413 and the file is gone.
 */
async function stageFile(
  deps: Deps,
  file: Readable & { truncated?: boolean },
  maxBytes: number,
): Promise<{ path: string; sha256: string; size: number; head: Buffer; discard(): Promise<void> }> {
  const dir = await deps.temp.mkdtemp('form-');
  const discard = () => rm(dir, { recursive: true, force: true });
  try {
    const path = join(dir, 'file');
    const hash = createHash('sha256');
    const head = new HeadKeeper();
    let size = 0;
    file.on('data', (chunk: Buffer) => {
      size += chunk.length;
      hash.update(chunk);
      head.keep(chunk);
    });
    await pipeline(file, createWriteStream(path, { mode: 0o600 }));
    if (file.truncated)
      throw new AppError(
        'payload_too_large',
        `The file is larger than ${maxBytes} bytes: use POST /v1/asset with filesize for a multipart upload; nothing was kept`,
      );
    return { path, sha256: hash.digest('hex'), size, head: head.head, discard };
  } catch (error) {
    file.resume();
    await discard();
    throw error;
  }
}

/**
 * The parts of a multipart request. A body the parser cannot read (no boundary, cut short, not
 * multipart at all) is a 400 naming the body; the parser's own limits keep their status (413).
 */
export async function* wellFormedParts(request: FastifyRequest): AsyncGenerator<Multipart> {
  const parts = request.parts()[Symbol.asyncIterator]();
  for (;;) {
    let step: IteratorResult<Multipart>;
    try {
      step = await parts.next();
    } catch (error) {
      if (error instanceof AppError || typeof (error as { statusCode?: unknown }).statusCode === 'number') throw error;
      throw invalidField('body', `is not well-formed multipart/form-data: ${(error as Error).message}`);
    }
    if (step.done) return;
    yield step.value;
  }
}
