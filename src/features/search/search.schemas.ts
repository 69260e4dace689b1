import { Type, type Static } from 'typebox';
import { AssetRecordSchema } from '../assets/index.ts';

const SearchTerm = Type.Union(
  [Type.Array(Type.String({ maxLength: 500 }), { maxItems: 50 }), Type.String({ maxLength: 500 })],
  {
    description:
      'Keywords ("logo"), prefixes ("log*"), phrases ("\\"red car\\""), facet terms ("Agency: Sunset Images LLC") or "*"',
  },
);
const Operation = Type.String({ description: 'AND (default) or OR; case-insensitive', examples: ['AND'] });
export const SortKeySchema = Type.Object({
  metadataDefinitionSearchField: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'createdEpoch, lastUpdatedEpoch, filename, relevance or a sortable attribute search field',
  }),
  order: Type.Optional(Type.String({ description: 'asc or desc (default desc); case-insensitive' })),
});
export const RangeSchema = Type.Object({
  field: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'createdEpoch, lastUpdatedEpoch, or a date attribute search field',
  }),
  from: Type.Optional(
    Type.Union([Type.Number(), Type.String()], {
      description: 'Inclusive lower bound: epoch ms, ISO date or mm/dd/yyyy',
    }),
  ),
  to: Type.Optional(
    Type.Union([Type.Number(), Type.String()], {
      description: 'Inclusive upper bound: epoch ms, ISO date or mm/dd/yyyy (a bare date includes that whole day)',
    }),
  ),
});

const common = {
  searchTerm: Type.Optional(SearchTerm),
  operation: Type.Optional(Operation),
  keywordSearchField: Type.Optional(
    Type.String({ description: 'filename, assetId, metadata or content; omitted: all' }),
  ),
  includeDeleted: Type.Optional(Type.Boolean({ default: false })),
  includeVersions: Type.Optional(Type.Boolean({ default: false })),
  sortBy: Type.Optional(Type.Array(SortKeySchema, { maxItems: 4 })),
  filters: Type.Optional(
    Type.Array(Type.String({ maxLength: 600 }), {
      maxItems: 50,
      description: 'Facet filters, always ANDed: ("Attribute Name":"Value")',
    }),
  ),
  dateRanges: Type.Optional(
    Type.Array(RangeSchema, { maxItems: 10, description: 'Tessera extension: inclusive ranges on dates' }),
  ),
};

export const KeywordSearchBodySchema = Type.Object(
  {
    from: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 50 })),
    ...common,
    excludes: Type.Optional(
      Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50, description: 'Dot paths removed from each result' }),
    ),
    aggregations: Type.Optional(Type.Boolean({ default: true, description: 'Return facets (false is faster)' })),
    facets: Type.Optional(
      Type.Array(Type.String({ maxLength: 200 }), {
        maxItems: 20,
        description: 'Tessera extension: which facets to compute',
      }),
    ),
    facetSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: true },
);
export type KeywordSearchBody = Static<typeof KeywordSearchBodySchema>;

export const SearchBodySchema = Type.Object(
  {
    from: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, default: 50 })),
    ...common,
    relevancy: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Rank by relevance (operation is then ignored: any term may match)',
      }),
    ),
    includes: Type.Optional(
      Type.Array(Type.String({ maxLength: 200 }), {
        maxItems: 50,
        description: 'Extra fields: camelCase system fields or metadataDocument.<searchField>',
      }),
    ),
    facets: Type.Optional(
      Type.Union([Type.Boolean(), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 20 })], {
        description: 'true (default): every facet; false: none; or the facet names to compute',
      }),
    ),
    facetSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: true },
);
export type SearchBody = Static<typeof SearchBodySchema>;

export const ScanBodySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    cursor: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: "Omit on the first call; then send back the previous response's cursor",
      }),
    ),
    from: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1_000_000_000,
        default: 0,
        description:
          'First call only: start the scan this many results in (a client jumping deep into a large result); the cursors then continue from there',
      }),
    ),
    ...common,
    assetType: Type.Optional(
      Type.String({ maxLength: 200, description: 'Restrict to assets of this metadata template (by name)' }),
    ),
    aggregations: Type.Optional(
      Type.Boolean({ default: false, description: 'Facets over the whole result, on the first call only' }),
    ),
  },
  { additionalProperties: true },
);
export type ScanBody = Static<typeof ScanBodySchema>;

const Facet = Type.Object({
  facet_name: Type.String(),
  values: Type.Array(Type.Object({ key: Type.String(), doc_count: Type.Integer() })),
});
const AssetRecord = AssetRecordSchema;

export const SearchResultSchema = Type.Object({
  hitCount: Type.Integer({ description: "Number of results in this page (as the reference's clients read it)" }),
  totalCount: Type.Integer({ description: 'Results the caller may view in all' }),
  from: Type.Integer(),
  limit: Type.Integer(),
  result: Type.Array(AssetRecord),
  facets: Type.Array(Facet),
  estimated: Type.Optional(
    Type.Boolean({
      description:
        'Present (true) only while the search index loads after a start and many assets match: totalCount and the facet counts are then estimates; the page itself is exact',
    }),
  ),
});

export const ScanResultSchema = Type.Object({
  hitCount: Type.Integer(),
  cursor: Type.Union([Type.String(), Type.Null()], { description: 'Null when the scan is complete' }),
  result: Type.Array(AssetRecord),
  facets: Type.Array(Facet),
});
