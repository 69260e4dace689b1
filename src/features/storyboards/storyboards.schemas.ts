import { Type, type Static } from 'typebox';

const Id = Type.String({ format: 'uuid' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const BLOCK_TYPES = [
  'heading',
  'richText',
  'asset',
  'gallery',
  'collection',
  'savedSearch',
  'link',
  'divider',
] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

/**
 * One block as a client sends it. A flat object (not a union) so that a wrong or missing field
 * gets a message naming the block's type and the field, checked in blocks.ts.
 */
export const BlockInputSchema = Type.Object(
  {
    id: Type.Optional(Id),
    type: Type.Union(
      BLOCK_TYPES.map((t) => Type.Literal(t)),
      { description: BLOCK_TYPES.join(' | ') },
    ),
    text: Type.Optional(Type.String({ maxLength: 500, description: 'heading: the text' })),
    level: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, description: 'heading: 1–3 (default 2)' })),
    html: Type.Optional(Type.String({ maxLength: 200_000, description: 'richText: HTML, sanitised on save' })),
    assetId: Type.Optional(Id),
    assetIds: Type.Optional(Type.Array(Id, { maxItems: 100, description: 'gallery: 1–100 assets, in order' })),
    collectionId: Type.Optional(Id),
    savedSearchId: Type.Optional(Id),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'collection / savedSearch: assets shown (default 24)' }),
    ),
    caption: Type.Optional(Type.String({ maxLength: 1000 })),
    title: Type.Optional(
      Type.String({ maxLength: 200, description: 'collection / savedSearch: heading shown above the assets' }),
    ),
    url: Type.Optional(Type.String({ maxLength: 2000, description: 'link: http, https or mailto' })),
    label: Type.Optional(Type.String({ maxLength: 200, description: 'link: text shown' })),
  },
  { additionalProperties: false },
);
export type BlockInput = Static<typeof BlockInputSchema>;

/** A stored block: its id, type and the fields of that type. */
export const BlockSchema = Type.Object(
  {
    id: Id,
    type: Type.String(),
    text: Type.Optional(Type.String()),
    level: Type.Optional(Type.Integer()),
    html: Type.Optional(Type.String()),
    assetId: Type.Optional(Id),
    assetIds: Type.Optional(Type.Array(Id)),
    collectionId: Type.Optional(Id),
    savedSearchId: Type.Optional(Id),
    limit: Type.Optional(Type.Integer()),
    caption: Type.Optional(Type.String()),
    title: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    label: Type.Optional(Type.String()),
    redacted: Type.Optional(
      Type.Boolean({
        description:
          'The block names sources you may not view: their ids and its caption are left out. Send the block back by id (without them) to keep it as it is',
      }),
    ),
  },
  { $id: 'StoryboardBlock', title: 'StoryboardBlock' },
);
export type Block = Static<typeof BlockSchema>;

export const StatusSchema = Type.Union([Type.Literal('draft'), Type.Literal('published')]);

const Flags = {
  canEdit: Type.Boolean({ description: 'May change title, blocks and cover' }),
  canDelete: Type.Boolean(),
  canApplySecurityTemplates: Type.Boolean(),
  canShareInternal: Type.Boolean(),
  canShareExternal: Type.Boolean(),
  canPublish: Type.Boolean(),
};

export const StoryboardSummarySchema = Type.Object(
  {
    id: Id,
    title: Type.String(),
    description: Type.String(),
    locale: Type.String(),
    status: StatusSchema,
    coverAssetId: Nullable(Id),
    securityTemplateIds: Type.Array(Id),
    blockCount: Type.Integer(),
    version: Type.Integer({ description: 'Increases with every change; send it back to refuse a lost update (409)' }),
    createdBy: Id,
    createdDate: Type.String({ format: 'date-time' }),
    lastUpdatedDate: Type.String({ format: 'date-time' }),
    createdEpoch: Type.Integer(),
    lastUpdatedEpoch: Type.Integer(),
    publishedDate: Nullable(Type.String({ format: 'date-time' })),
    ...Flags,
  },
  { $id: 'StoryboardSummary', title: 'StoryboardSummary' },
);
export type StoryboardSummary = Static<typeof StoryboardSummarySchema>;

export const StoryboardSchema = Type.Object(
  {
    ...StoryboardSummarySchema.properties,
    blocks: Type.Array(Type.Ref('StoryboardBlock'), {
      description: 'In order. Callers who cannot edit see only blocks whose source they can see.',
    }),
  },
  { $id: 'Storyboard', title: 'Storyboard' },
);
export type Storyboard = Static<typeof StoryboardSchema>;

export const ListQuerySchema = Type.Object({
  cursor: Type.Optional(
    Type.String({ maxLength: 1000, description: 'nextCursor of the previous page; omit on the first' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  search: Type.Optional(
    Type.String({ maxLength: 200, description: 'Partial, case-insensitive match on title and description' }),
  ),
  sortBy: Type.Optional(Type.Union([Type.Literal('updatedAt'), Type.Literal('title')], { default: 'updatedAt' })),
  sortOrder: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' })),
  status: Type.Optional(
    Type.Union([Type.Literal('all'), Type.Literal('published'), Type.Literal('draft'), Type.Literal('unpublished')], {
      default: 'all',
    }),
  ),
  locale: Type.Optional(Type.String({ maxLength: 35 })),
});
export type ListQuery = Static<typeof ListQuerySchema>;

export const StoryboardListSchema = Type.Object({
  items: Type.Array(Type.Ref('StoryboardSummary')),
  nextCursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null on the last' })),
});

const Locale = Type.String({
  minLength: 2,
  maxLength: 35,
  pattern: '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$',
  description: 'BCP 47, e.g. en-US',
});

export const CreateSchema = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  locale: Type.Optional(Locale),
  coverAssetId: Type.Optional(Nullable(Id)),
  securityTemplateIds: Type.Optional(Type.Array(Id, { maxItems: 50 })),
  blocks: Type.Optional(Type.Array(BlockInputSchema, { maxItems: 200 })),
  status: Type.Optional(StatusSchema),
});
export type CreateInput = Static<typeof CreateSchema>;

export const UpdateSchema = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  locale: Type.Optional(Locale),
  coverAssetId: Type.Optional(Nullable(Id)),
  securityTemplateIds: Type.Optional(Type.Array(Id, { maxItems: 50 })),
  blocks: Type.Optional(Type.Array(BlockInputSchema, { maxItems: 200, description: 'Replaces every block at once' })),
  version: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Refuse (409) unless the story board is still at this version' }),
  ),
});
export type UpdateInput = Static<typeof UpdateSchema>;

export const ReplaceBlocksSchema = Type.Object({
  blocks: Type.Array(BlockInputSchema, { maxItems: 200 }),
  version: Type.Optional(Type.Integer({ minimum: 1 })),
});

export const AddBlockSchema = Type.Object({
  block: BlockInputSchema,
  position: Type.Optional(Type.Integer({ minimum: 0, description: '0-based; default: at the end' })),
  version: Type.Optional(Type.Integer({ minimum: 1 })),
});

export const EditBlockSchema = Type.Object({
  block: BlockInputSchema,
  version: Type.Optional(Type.Integer({ minimum: 1 })),
});

export const ReorderSchema = Type.Object({
  blockIds: Type.Array(Id, { maxItems: 200, description: 'Every block id exactly once, in the new order' }),
  version: Type.Optional(Type.Integer({ minimum: 1 })),
});

export const VersionBodySchema = Type.Object({ version: Type.Optional(Type.Integer({ minimum: 1 })) });

export const IdParamsSchema = Type.Object({ id: Id });
export const BlockParamsSchema = Type.Object({ id: Id, blockId: Id });

// --- viewing ---

export const AssetCardSchema = Type.Object(
  {
    id: Id,
    filename: Type.String(),
    title: Type.String(),
    mimeType: Type.String(),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    renditions: Type.Record(Type.String(), Type.String({ description: 'URL' }), {
      description: 'imageThumb, imagePreview, imagePreviewLarge … → URL',
    }),
  },
  { $id: 'StoryboardAsset', title: 'StoryboardAsset' },
);

export const ViewBlockSchema = Type.Object(
  {
    id: Id,
    type: Type.String(),
    text: Type.Optional(Type.String()),
    level: Type.Optional(Type.Integer()),
    html: Type.Optional(Type.String()),
    caption: Type.Optional(Type.String()),
    title: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    label: Type.Optional(Type.String()),
    asset: Type.Optional(Type.Ref('StoryboardAsset')),
    assets: Type.Optional(Type.Array(Type.Ref('StoryboardAsset'))),
    total: Type.Optional(Type.Integer({ description: 'collection / savedSearch: assets this viewer may see in all' })),
  },
  { $id: 'StoryboardViewBlock', title: 'StoryboardViewBlock' },
);

export const StoryboardViewSchema = Type.Object(
  {
    id: Id,
    title: Type.String(),
    description: Type.String(),
    locale: Type.String(),
    status: StatusSchema,
    cover: Nullable(Type.Ref('StoryboardAsset')),
    lastUpdatedDate: Type.String({ format: 'date-time' }),
    blocks: Type.Array(Type.Ref('StoryboardViewBlock'), {
      description: 'Only blocks whose source this viewer may see, each with only the assets this viewer may see',
    }),
  },
  { $id: 'StoryboardView', title: 'StoryboardView' },
);

// --- sharing ---

export const InternalShareSchema = Type.Object({
  userIds: Type.Optional(Type.Array(Id, { maxItems: 100 })),
  groupIds: Type.Optional(Type.Array(Id, { maxItems: 100 })),
});

export const ShareSubjectParamsSchema = Type.Object({ id: Id, subjectId: Id });

export const CreateLinkSchema = Type.Object({
  expiresAt: Type.Optional(
    Nullable(Type.String({ format: 'date-time', description: 'Default: 30 days from now; null: never' })),
  ),
  password: Type.Optional(Type.String({ minLength: 4, maxLength: 200 })),
});

export const LinkParamsSchema = Type.Object({ id: Id, linkId: Id });

export const LinkSchema = Type.Object(
  {
    id: Id,
    tokenHint: Type.String({ description: 'Last 4 characters of the token' }),
    passwordProtected: Type.Boolean(),
    expiresAt: Nullable(Type.String({ format: 'date-time' })),
    revokedAt: Nullable(Type.String({ format: 'date-time' })),
    createdBy: Id,
    createdAt: Type.String({ format: 'date-time' }),
    lastOpenedAt: Nullable(Type.String({ format: 'date-time' })),
    openCount: Type.Integer(),
    active: Type.Boolean(),
  },
  { $id: 'StoryboardLink', title: 'StoryboardLink' },
);

export const CreatedLinkSchema = Type.Object({
  ...LinkSchema.properties,
  token: Type.String({ description: 'Shown only here' }),
  url: Type.String({ description: 'The read-only HTML page; append /view for its JSON form' }),
});

export const SharesSchema = Type.Object({
  internal: Type.Array(
    Type.Object({
      type: Type.Union([Type.Literal('user'), Type.Literal('group')]),
      id: Id,
      name: Type.String(),
      sharedAt: Type.String({ format: 'date-time' }),
    }),
  ),
  links: Type.Array(Type.Ref('StoryboardLink')),
});

export const TokenParamsSchema = Type.Object({ token: Type.String({ minLength: 10, maxLength: 100 }) });
export const TokenAssetParamsSchema = Type.Object({
  token: Type.String({ minLength: 10, maxLength: 100 }),
  assetId: Id,
  rendition: Type.String({ maxLength: 40 }),
});
export const UnlockSchema = Type.Object({ password: Type.String({ maxLength: 200 }) });
