import { Type, type Static } from 'typebox';
import { RangeSchema, SortKeySchema } from '../search.schemas.ts';

export const SavedQuerySchema = Type.Object(
  {
    searchTerm: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 500 }), { maxItems: 50 }), Type.String({ maxLength: 500 })]),
    ),
    operation: Type.Optional(Type.String()),
    keywordSearchField: Type.Optional(Type.String()),
    includeDeleted: Type.Optional(Type.Boolean()),
    includeVersions: Type.Optional(Type.Boolean()),
    sortBy: Type.Optional(Type.Array(SortKeySchema, { maxItems: 4 })),
    filters: Type.Optional(Type.Array(Type.String({ maxLength: 600 }), { maxItems: 50 })),
    dateRanges: Type.Optional(Type.Array(RangeSchema, { maxItems: 10 })),
    relevancy: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'The query: the body of POST /v1/search without paging' },
);
export type SavedQuery = Static<typeof SavedQuerySchema>;

export const SavedSearchCreateSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  query: SavedQuerySchema,
  securityTemplateIds: Type.Optional(
    Type.Array(Type.String({ maxLength: 100 }), {
      maxItems: 50,
      description:
        'Empty or omitted: private to its creator; otherwise shared with groups holding View through these templates',
    }),
  ),
});
export type SavedSearchCreate = Static<typeof SavedSearchCreateSchema>;

export const SavedSearchUpdateSchema = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  query: Type.Optional(SavedQuerySchema),
  securityTemplateIds: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })),
});
export type SavedSearchUpdate = Static<typeof SavedSearchUpdateSchema>;

export const SavedSearchSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    visibility: Type.Union([Type.Literal('private'), Type.Literal('shared')]),
    securityTemplateIds: Type.Array(Type.String()),
    query: SavedQuerySchema,
    ownerId: Type.String(),
    createdEpoch: Type.Integer(),
    lastUpdatedEpoch: Type.Integer(),
  },
  { $id: 'SavedSearch', title: 'SavedSearch' },
);
export type SavedSearch = Static<typeof SavedSearchSchema>;

export const SavedSearchListQuerySchema = Type.Object({
  from: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  searchTerm: Type.Optional(Type.String({ maxLength: 200, description: 'Part of the name, case-insensitive' })),
});
export const SavedSearchListSchema = Type.Object({
  totalCount: Type.Integer(),
  result: Type.Array(Type.Ref('SavedSearch')),
});

export const SavedSearchRunSchema = Type.Object({
  from: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 50 })),
  aggregations: Type.Optional(Type.Boolean({ default: true })),
});
export const IdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
