import { createRequire } from 'node:module';
import type SanitizeHtml from 'sanitize-html';
import { invalidField } from '../../core/http/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Block, BlockInput } from './storyboards.schemas.ts';

export const DEFAULT_SOURCE_LIMIT = 24;

// sanitize-html (with htmlparser2 and postcss) is loaded by the first rich-text block, not at start
// (lean start). It is CommonJS, so requiring it on first use is synchronous.
let sanitizer: typeof SanitizeHtml | undefined;
const sanitizeHtml = (): typeof SanitizeHtml =>
  (sanitizer ??= createRequire(import.meta.url)('sanitize-html') as typeof SanitizeHtml);

/**
 * Rich text keeps structure and emphasis only: no scripts, styles, event handlers, frames,
 * forms or images (images come from asset blocks, with permissions); links are http(s)/mailto
 * and open in a new tab without a referrer.
 */
const richTextOptions = (): SanitizeHtml.IOptions => ({
  allowedTags: [
    'p',
    'br',
    'strong',
    'b',
    'em',
    'i',
    'u',
    's',
    'a',
    'ul',
    'ol',
    'li',
    'blockquote',
    'h2',
    'h3',
    'h4',
    'code',
    'pre',
    'hr',
    'span',
    'sub',
    'sup',
  ],
  allowedAttributes: { a: ['href', 'title', 'rel', 'target'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: { a: sanitizeHtml().simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }) },
});
let richText: SanitizeHtml.IOptions | undefined;

export function sanitizeRichText(html: string): string {
  return sanitizeHtml()(html, (richText ??= richTextOptions())).trim();
}

const SAFE_URL = /^(https?:\/\/[^\s]+|mailto:[^\s]+)$/i;

export function isSafeLinkUrl(url: string): boolean {
  if (!SAFE_URL.test(url)) return false;
  try {
    const parsed = new URL(url);
    return ['http:', 'https:', 'mailto:'].includes(parsed.protocol);
  } catch {
    return false;
  }
}

/** Fields each block type takes (besides id and type); anything else sent is an error. */
const FIELDS: Record<BlockInput['type'], readonly (keyof BlockInput)[]> = {
  heading: ['text', 'level'],
  richText: ['html'],
  asset: ['assetId', 'caption'],
  gallery: ['assetIds', 'caption'],
  collection: ['collectionId', 'limit', 'title', 'caption'],
  savedSearch: ['savedSearchId', 'limit', 'title', 'caption'],
  link: ['url', 'label'],
  divider: [],
};

/**
 * Checks and normalises the blocks of a request. Ids of existing blocks are kept (so clients can
 * address them); new blocks get fresh ids. `field` is the JSON path of the array in the request.
 */
export function normalizeBlocks(
  inputs: readonly BlockInput[],
  field: string,
  now: number,
  existing: readonly Block[] = [],
): Block[] {
  const known = new Set(existing.map((b) => b.id));
  const seen = new Set<string>();
  return inputs.map((input, i) => {
    const block = normalizeBlock(input, `${field}.${i}`, now);
    if (input.id !== undefined) {
      if (!known.has(input.id))
        throw invalidField(`${field}.${i}.id`, 'is not a block of this story board (omit it for a new block)');
      if (seen.has(input.id)) throw invalidField(`${field}.${i}.id`, 'appears twice');
      seen.add(input.id);
    }
    return block;
  });
}

export function normalizeBlock(input: BlockInput, field: string, now: number): Block {
  const allowed = new Set<string>(['id', 'type', ...FIELDS[input.type]]);
  for (const key of Object.keys(input)) {
    if (!allowed.has(key) && (input as Record<string, unknown>)[key] !== undefined) {
      throw invalidField(`${field}.${key}`, `is not a field of a ${input.type} block`);
    }
  }
  const id = input.id ?? newId(now);
  const need = <K extends keyof BlockInput>(key: K): NonNullable<BlockInput[K]> => {
    const value = input[key];
    if (value === undefined || value === null)
      throw invalidField(`${field}.${key}`, `is required for a ${input.type} block`);
    return value as NonNullable<BlockInput[K]>;
  };
  const opt = <K extends 'caption' | 'title' | 'label'>(key: K) =>
    input[key] !== undefined && input[key]!.trim() !== '' ? { [key]: input[key]!.trim() } : {};
  switch (input.type) {
    case 'heading': {
      const text = need('text').trim();
      if (text === '') throw invalidField(`${field}.text`, 'must not be empty');
      return { id, type: 'heading', text, level: input.level ?? 2 };
    }
    case 'richText': {
      const html = sanitizeRichText(need('html'));
      if (html === '') throw invalidField(`${field}.html`, 'is empty once sanitised');
      return { id, type: 'richText', html };
    }
    case 'asset':
      return { id, type: 'asset', assetId: need('assetId'), ...opt('caption') };
    case 'gallery': {
      const assetIds = need('assetIds');
      if (assetIds.length === 0) throw invalidField(`${field}.assetIds`, 'must name at least one asset');
      if (new Set(assetIds).size !== assetIds.length) throw invalidField(`${field}.assetIds`, 'names an asset twice');
      return { id, type: 'gallery', assetIds: [...assetIds], ...opt('caption') };
    }
    case 'collection':
      return {
        id,
        type: 'collection',
        collectionId: need('collectionId'),
        limit: input.limit ?? DEFAULT_SOURCE_LIMIT,
        ...opt('title'),
        ...opt('caption'),
      };
    case 'savedSearch':
      return {
        id,
        type: 'savedSearch',
        savedSearchId: need('savedSearchId'),
        limit: input.limit ?? DEFAULT_SOURCE_LIMIT,
        ...opt('title'),
        ...opt('caption'),
      };
    case 'link': {
      const url = need('url').trim();
      if (!isSafeLinkUrl(url)) throw invalidField(`${field}.url`, 'must be an http, https or mailto URL');
      return { id, type: 'link', url, ...opt('label') };
    }
    case 'divider':
      return { id, type: 'divider' };
    default:
      throw invalidField(`${field}.type`, 'is not a block type');
  }
}
