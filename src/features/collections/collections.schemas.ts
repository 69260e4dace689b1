import { Type, type Static } from 'typebox';
import { docAs, docRequired } from '../../core/http/doc-schema.ts';
import { legacyTableDoc, legacyValueDoc, metadataItemInputDoc } from '../metadata/index.ts';

const Id = Type.String({ minLength: 1, maxLength: 100 });
const Ids = (max: number, description: string) => Type.Array(Id, { maxItems: max, description });
const MetadataDocument = Type.Union(
  [
    Type.Array(docAs(Type.Object({}, { additionalProperties: true }), metadataItemInputDoc), { maxItems: 500 }),
    Type.String({ maxLength: 200_000 }),
    Type.Null(),
  ],
  {
    description: "Metadata document (array, or the same as a JSON string as the reference's training code sends)",
  },
);

export const CollectionCreateSchema = Type.Object(
  {
    collectionType: Type.Optional(Type.String({ description: 'private or secured (required)' })),
    name: Type.Optional(Type.String({ description: 'Unique in the organization (required)' })),
    collectionDocument: Type.Optional(
      Ids(10_000, 'Member assets: fileIds (objectIds are accepted and stored as their fileId)'),
    ),
    metadataTemplateId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    securityTemplateIds: Type.Optional(Ids(50, 'Required for secured collections')),
    MetadataDocument: Type.Optional(MetadataDocument),
    metadataDocument: Type.Optional(MetadataDocument),
  },
  { additionalProperties: true },
);
docRequired(CollectionCreateSchema, ['collectionType', 'name']);
export type CollectionCreate = Static<typeof CollectionCreateSchema>;

export const CollectionCreatedSchema = Type.Object({
  statusCode: Type.Literal('success'),
  message: Type.String(),
  collectionId: Type.String(),
});

export const CollectionSchema = Type.Object(
  {
    collectionId: Type.String(),
    name: Type.String(),
    collectionType: Type.Union([Type.Literal('private'), Type.Literal('secured')]),
    collectionDocument: Type.Array(Type.String(), { description: 'fileIds of the members this caller may view' }),
    memberCount: Type.Integer({ description: 'Members this caller may view' }),
    shared: Type.Union([Type.Literal('Y'), Type.Literal('N')]),
    shareDocument: Type.Array(Type.String()),
    recipients: Type.Array(Type.String()),
    shareMessage: Type.String(),
    sender: Type.Object(
      { name: Type.Optional(Type.String({ description: 'The sender named by a share' })) },
      { additionalProperties: true },
    ),
    downloadId: Type.String(),
    expirationDate: Type.Integer(),
    securityTemplateIds: Type.Array(Type.String()),
    metadataTemplateId: Type.Union([Type.String(), Type.Null()]),
    metadataDocument: Type.Array(
      Type.Object(
        {
          metadataDefinitionId: Type.Optional(Type.String({ description: 'The attribute' })),
          metadataDefinitionValue: Type.Optional(docAs(Type.Unknown(), legacyValueDoc)),
          metadataDefinitionTableValue: Type.Optional(docAs(Type.Array(Type.Array(Type.Unknown())), legacyTableDoc)),
        },
        { additionalProperties: true },
      ),
    ),
    userCognitoId: Type.String({ description: 'Creator' }),
    customerId: Type.String(),
    createdEpoch: Type.Integer(),
    lastUpdatedEpoch: Type.Integer(),
  },
  { $id: 'Collection', title: 'Collection' },
);
export type Collection = Static<typeof CollectionSchema>;

export const CollectionLegacyUpdateSchema = Type.Object(
  {
    collectionType: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    collectionDocument: Type.Optional(Ids(10_000, 'Replaces the members this caller may view')),
    securityTemplateIds: Type.Optional(Ids(50, 'Replaces the security templates (secured collections)')),
  },
  { additionalProperties: true },
);
export type CollectionLegacyUpdate = Static<typeof CollectionLegacyUpdateSchema>;

const MembershipOp = Type.Object({
  operation: Type.String({ description: 'add, remove or replace' }),
  fileIds: Ids(10_000, 'Assets (fileIds or objectIds)'),
});
export const CollectionUpdateSchema = Type.Object(
  {
    collectionName: Type.Optional(Type.String()),
    securityTemplateIds: Type.Optional(Ids(50, 'Replaces the current assignments')),
    collectionUpdates: Type.Optional(Type.Union([MembershipOp, Type.Array(MembershipOp, { maxItems: 20 })])),
    metadata: Type.Optional(
      Type.Array(docAs(Type.Object({}, { additionalProperties: true }), metadataItemInputDoc), {
        maxItems: 500,
        description: 'Partial: only the listed attributes change',
      }),
    ),
  },
  { additionalProperties: true },
);
export type CollectionUpdate = Static<typeof CollectionUpdateSchema>;

export const UpdatedSchema = Type.Object({
  status: Type.Optional(Type.String()),
  message: Type.String(),
  data: Type.Optional(Type.Ref('Collection')),
});
export const DeletedSchema = Type.Array(Type.Object({ status: Type.String(), message: Type.String() }));
export const IdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const CollectionAssetsQuerySchema = Type.Object({
  from: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 50 })),
  sortBy: Type.Optional(
    Type.String({ description: 'createdEpoch, lastUpdatedEpoch, filename or a sortable attribute' }),
  ),
  order: Type.Optional(Type.String({ description: 'asc or desc' })),
  aggregations: Type.Optional(Type.Boolean({ default: false })),
});

export const CollectionSearchBodySchema = Type.Object(
  {
    from: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 50 })),
    searchTerm: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 500 }), { maxItems: 50 }), Type.String({ maxLength: 500 })]),
    ),
    operation: Type.Optional(Type.String()),
    sortBy: Type.Optional(
      Type.Array(
        Type.Object({
          metadataDefinitionSearchField: Type.String({ minLength: 1, maxLength: 200 }),
          order: Type.Optional(Type.String()),
        }),
        { maxItems: 3 },
      ),
    ),
    keywordSearchField: Type.Optional(Type.String()),
    includeDeleted: Type.Optional(Type.Boolean()),
    includeVersions: Type.Optional(Type.Boolean()),
    aggregations: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: true },
);
export type CollectionSearchBody = Static<typeof CollectionSearchBodySchema>;

export const CollectionSearchItemSchema = Type.Object({
  collectionId: Type.String(),
  name: Type.String(),
  collectionType: Type.String(),
  shared: Type.String(),
  shareDocument: Type.Array(Type.String()),
  collectionDocument: Type.Array(Type.String()),
  userCognitoId: Type.String(),
  customerId: Type.Integer(),
  createdEpoch: Type.Integer(),
  lastUpdatedEpoch: Type.Integer(),
});
export const CollectionSearchResultSchema = Type.Object({
  hitCount: Type.Integer(),
  totalCount: Type.Integer(),
  result: Type.Array(CollectionSearchItemSchema),
  facets: Type.Array(
    Type.Object({
      facet_name: Type.String(),
      values: Type.Array(Type.Object({ key: Type.String(), doc_count: Type.Integer() })),
    }),
  ),
});
