import { Type, type Static, type TSchema } from 'typebox';
import { DATE_FORMATS } from './validation/model.ts';
import { simplifiedValueInputDoc } from './validation/value-docs.ts';
import { anyJsonDoc, docAs } from '../../core/http/doc-schema.ts';

const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
const Name = Type.String({ maxLength: 200, description: 'Display name (1–200 characters)' });
const Epoch = Type.Integer({ description: 'Epoch milliseconds' });
const Iso = Type.String({ format: 'date-time' });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const IdParamsSchema = Type.Object({ id: Uuid });

// --- vocabularies (reference §10.5) ---

const VocabValueInput = Type.Union([
  Type.String({ description: 'The value name' }),
  Type.Object(
    {
      valueName: Type.Optional(Type.String()),
      name: Type.Optional(Type.String({ description: 'Alias of valueName' })),
      parentValueId: Type.Optional(Nullable(Uuid)),
    },
    { description: 'A value with a parent link (cascading vocabularies)' },
  ),
]);
export type VocabValueInput = Static<typeof VocabValueInput>;

export const VocabularyCreateSchema = Type.Object({
  name: Type.String({ maxLength: 200 }),
  values: Type.Optional(Type.Array(VocabValueInput, { maxItems: 10_000 })),
  searchable: Type.Optional(Type.Boolean()),
});
export type VocabularyCreate = Static<typeof VocabularyCreateSchema>;

export const VocabularyUpdateSchema = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200 })),
  searchable: Type.Optional(Type.Boolean()),
  add: Type.Optional(Type.Array(VocabValueInput, { maxItems: 10_000 })),
  update: Type.Optional(
    Type.Array(
      Type.Object({
        valueId: Uuid,
        valueName: Type.Optional(Type.String()),
        parentValueId: Type.Optional(Nullable(Uuid)),
      }),
      { maxItems: 10_000 },
    ),
  ),
  delete: Type.Optional(Type.Array(Uuid, { maxItems: 10_000 })),
});
export type VocabularyUpdate = Static<typeof VocabularyUpdateSchema>;

const VocabValue = Type.Object({ valueId: Uuid, valueName: Type.String(), parentValueId: Nullable(Uuid) });
const VocabDocument = Type.Object({ values: Type.Array(VocabValue), searchable: Type.Boolean() });
const vocabularyFields = {
  metadataDefinitionId: Uuid,
  metadataDefinitionName: Type.String(),
  metadataDefinitionSearchField: Type.String(),
  metadataDefinitionType: Type.Literal('controlledVocabulary'),
  customerId: Type.String(),
  createdEpoch: Epoch,
  lastUpdatedEpoch: Epoch,
  usedBy: Type.Array(Type.Object({ id: Uuid, name: Type.String() }), {
    description: 'Attributes using this vocabulary',
  }),
};
export const VocabularyListItemSchema = Type.Object(
  { ...vocabularyFields, metadata: VocabDocument },
  { $id: 'ControlledVocabularyListItem' },
);
export const VocabularySchema = Type.Object(
  { ...vocabularyFields, metadataDocument: VocabDocument },
  { $id: 'ControlledVocabularyResponse' },
);
export const DeletedSchema = Type.Object({ status: Type.Literal('success'), message: Type.String() });

// --- attributes ---

const TypeName = Type.String({
  description:
    'text | date | controlledVocabulary | table | cascade (also Text, Date, Controlled Vocabulary, Tabular, Cascading)',
});
const Flags = {
  required: Type.Optional(Type.Boolean()),
  readonly: Type.Optional(Type.Boolean()),
  visible: Type.Optional(Type.Boolean()),
  facetable: Type.Optional(Type.Boolean()),
  sortable: Type.Optional(Type.Boolean()),
  isRestricted: Type.Optional(Type.Boolean()),
};
const LevelInput = Type.Object({
  id: Type.Optional(Uuid),
  name: Type.String({ maxLength: 200 }),
  controlledVocabularyId: Uuid,
  isMultipleSelect: Type.Optional(Type.Boolean()),
  required: Type.Optional(Type.Boolean()),
});
export type LevelInput = Static<typeof LevelInput>;
const attributeWriteFields = {
  name: Type.Optional(Name),
  subType: Type.Optional(Type.String({ maxLength: 50 })),
  searchField: Type.Optional(Type.String({ maxLength: 100, description: 'Slug; derived from the name when omitted' })),
  length: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'Text: maximum length' })),
  isMultiLine: Type.Optional(Type.Boolean({ description: 'Text: line breaks allowed' })),
  dateFormat: Type.Optional(Type.String({ description: `Date: one of ${DATE_FORMATS.join(', ')}` })),
  controlledVocabularyId: Type.Optional(Uuid),
  isMultipleSelect: Type.Optional(Type.Boolean()),
  isSingleRow: Type.Optional(Type.Boolean({ description: 'Table: at most one row' })),
  tableFieldIds: Type.Optional(
    Type.Array(Uuid, {
      maxItems: 100,
      description: 'Table: column attributes (text, date, vocabulary or cascade), in order',
    }),
  ),
  levels: Type.Optional(
    Type.Array(LevelInput, { minItems: 1, maxItems: 20, description: 'Cascade: its levels, in order' }),
  ),
  embeddedFields: Type.Optional(
    Type.Array(Type.String({ maxLength: 100 }), {
      maxItems: 20,
      description:
        "Text and date (Tessera's own): embedded IPTC, XMP or EXIF fields read at upload and written back on ?embed=true downloads, as ExifTool names (XMP-dc:Title, IPTC:Keywords, EXIF:Artist …), first found wins",
    }),
  ),
  ...Flags,
};
export const AttributeCreateSchema = Type.Object({ ...attributeWriteFields, name: Name, type: TypeName });
export type AttributeCreate = Static<typeof AttributeCreateSchema>;
export const AttributeUpdateSchema = Type.Object(
  { ...attributeWriteFields, type: Type.Optional(TypeName) },
  { additionalProperties: true },
);
export type AttributeUpdate = Static<typeof AttributeUpdateSchema>;

const attributeReadFields = {
  id: Uuid,
  name: Type.String(),
  type: Type.String(),
  subType: Type.String(),
  searchField: Type.String(),
  isMultipleSelect: Type.Boolean(),
  controlledVocabularyId: Nullable(Uuid),
  dateFormat: Type.String({ description: "The date format, or 'N/A'" }),
  length: Nullable(Type.Integer()),
  isMultiLine: Type.Boolean(),
  embeddedFields: Type.Optional(
    Type.Array(Type.String(), { description: "Embedded fields this attribute reads at upload (Tessera's own)" }),
  ),
  required: Type.Boolean(),
  readonly: Type.Boolean(),
  visible: Type.Boolean(),
  facetable: Type.Boolean(),
  sortable: Type.Boolean(),
  isRestricted: Type.Boolean(),
  system: Type.Boolean(),
  fieldOrder: Type.Optional(Type.Integer()),
  createdEpoch: Epoch,
  lastUpdatedEpoch: Epoch,
  createdDate: Iso,
  lastUpdatedDate: Iso,
};
export const LevelSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  type: Type.Literal('controlledVocabulary'),
  controlledVocabularyId: Uuid,
  cascadeOrder: Type.Integer(),
  isMultipleSelect: Type.Boolean(),
  searchField: Type.String(),
  required: Type.Boolean(),
  readonly: Type.Boolean(),
  visible: Type.Boolean(),
});
const ColumnSchema = Type.Object({
  ...attributeReadFields,
  cascadeFieldsDenormalized: Type.Optional(Type.Array(LevelSchema)),
});
export const AttributeSchema = Type.Object(
  {
    ...attributeReadFields,
    isSingleRow: Type.Optional(Type.Boolean()),
    tableFieldsDenormalized: Type.Optional(Type.Array(ColumnSchema)),
    cascadeFieldsDenormalized: Type.Optional(Type.Array(LevelSchema)),
  },
  { $id: 'MetadataAttribute' },
);
export type AttributeOut = Static<typeof AttributeSchema>;

// --- paging (reference §10.7) ---

const Order = Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' });
export const GroupListQuerySchema = Type.Object({
  searchTerm: Type.Optional(Type.String({ maxLength: 200 })),
  from: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
  sortField: Type.Optional(
    Type.Union([Type.Literal('groupName'), Type.Literal('createdEpoch'), Type.Literal('lastUpdatedEpoch')], {
      default: 'groupName',
    }),
  ),
  order: Type.Optional(Order),
});
export type GroupListQuery = Static<typeof GroupListQuerySchema>;
export const TemplateListQuerySchema = Type.Object({
  searchTerm: Type.Optional(Type.String({ maxLength: 200 })),
  from: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  sortField: Type.Optional(
    Type.Union([Type.Literal('templateName'), Type.Literal('createdEpoch'), Type.Literal('lastUpdatedEpoch')], {
      default: 'templateName',
    }),
  ),
  order: Type.Optional(Order),
});
export type TemplateListQuery = Static<typeof TemplateListQuerySchema>;
export const AttributeListQuerySchema = Type.Object({
  searchTerm: Type.Optional(Type.String({ maxLength: 200 })),
  type: Type.Optional(Type.String()),
});

// --- groups ---

export const GroupCreateSchema = Type.Object({
  name: Name,
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  isGroupNameVisible: Type.Optional(Type.Boolean()),
  attributeIds: Type.Optional(Type.Array(Uuid, { maxItems: 500, description: 'Attributes of the group, in order' })),
});
export type GroupCreate = Static<typeof GroupCreateSchema>;
export const GroupUpdateSchema = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  isGroupNameVisible: Type.Optional(Type.Boolean()),
  attributeIds: Type.Optional(Type.Array(Uuid, { maxItems: 500 })),
});
export type GroupUpdate = Static<typeof GroupUpdateSchema>;
export const GroupSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    searchField: Type.String(),
    description: Type.String(),
    isGroupNameVisible: Type.Boolean(),
    system: Type.Boolean(),
    attributeIds: Type.Array(Uuid),
    attributes: Type.Array(
      Type.Object({ id: Uuid, name: Type.String(), searchField: Type.String(), type: Type.String() }),
    ),
    templates: Type.Array(Type.Object({ id: Uuid, name: Type.String() }), {
      description: 'Templates using this group',
    }),
    createdBy: Nullable(Uuid),
    lastUpdatedBy: Nullable(Uuid),
    createdEpoch: Epoch,
    createdDate: Iso,
    lastUpdatedEpoch: Epoch,
    lastUpdatedDate: Iso,
  },
  { $id: 'MetadataGroupSummary' },
);
export const GroupPageSchema = Type.Object({
  hitCount: Type.Integer(),
  results: Type.Array(Type.Ref('MetadataGroupSummary')),
});

// --- templates ---

const DefaultValue = Type.Object(
  { searchField: Type.String(), value: docAs(Type.Unknown(), simplifiedValueInputDoc) },
  { additionalProperties: true },
);
/** Stored and answered as sent; Tessera does not read it (the reference's template override). */
const TemplateOverride = docAs(
  Type.Unknown(),
  anyJsonDoc("The reference's template override: stored and answered as sent, not read by Tessera"),
);
const AccessTemplateRef = Type.Union(
  [Uuid, Type.Object({ id: Type.Optional(Uuid), templateId: Type.Optional(Uuid) })],
  { description: 'A security template id (or {id})' },
);
export const TemplateCreateSchema = Type.Object({
  name: Name,
  groupIds: Type.Array(Uuid, {
    maxItems: 200,
    description: 'Ordered; duplicates removed keeping the first; the system group is appended',
  }),
  templateType: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: 5,
      description:
        'default | asset | action (default ["default"]; case-insensitive, repeats dropped). default/asset: the template serves assets; action: the template is also made into a DAM object of type Action (GET /v1/action/{actionObjectId}) by a background job. Legacy search/proof/tile are read-only labels (400). Immutable afterwards.',
    }),
  ),
  attributesDefaultValue: Type.Optional(Type.Array(DefaultValue, { maxItems: 500 })),
  accessTemplates: Type.Optional(Type.Array(AccessTemplateRef, { maxItems: 100 })),
  templateOverride: Type.Optional(TemplateOverride),
});
export type TemplateCreate = Static<typeof TemplateCreateSchema>;
export const TemplateUpdateSchema = Type.Object(
  {
    name: Type.Optional(Name),
    groupIds: Type.Optional(Type.Array(Uuid, { maxItems: 200 })),
    attributesDefaultValue: Type.Optional(Type.Array(DefaultValue, { maxItems: 500 })),
    accessTemplates: Type.Optional(Type.Array(AccessTemplateRef, { maxItems: 100 })),
    templateOverride: Type.Optional(TemplateOverride),
  },
  {
    additionalProperties: true,
    description:
      'Only these fields may be sent; templateId, customerId, createdBy, createdEpoch, createdDate, templateType, templateDenormalized and dependencies are immutable (400)',
  },
);
export type TemplateUpdate = Static<typeof TemplateUpdateSchema>;

const LegacyGroup = Type.Object({
  groupOrder: Type.Integer(),
  metadataGroupId: Uuid,
  metadataGroupName: Type.String(),
  metadataGroupSearchField: Type.String(),
  isGroupNameVisible: Type.Boolean(),
  system: Type.Boolean(),
  securityPermissions: Type.Array(Type.Object({}, { additionalProperties: false }), {
    maxItems: 0,
    description:
      "Always empty, as in the reference's published templates: Tessera keeps no per-group permissions (who may use a template follows its access templates; restricted attributes follow the Sensitive Data privilege)",
  }),
  metadataAttributes: Type.Array(Type.Ref('MetadataAttribute')),
});
const ActionObjectId = Type.Union([Uuid, Type.Null()], {
  description:
    'Action-type templates: the objectId of the template-as-asset (GET /v1/action/{id}) once the background job has made it; null before, and for other templates',
});
export const LegacyTemplateSchema = Type.Object(
  {
    template: Type.Object({
      templateId: Uuid,
      templateName: Type.String(),
      templateType: Type.Array(Type.String()),
      isDefault: Type.Boolean(),
      actionObjectId: ActionObjectId,
      createdEpoch: Epoch,
      lastUpdatedEpoch: Epoch,
      metadataGroups: Type.Array(LegacyGroup),
    }),
  },
  { $id: 'MetadataTemplate' },
);
export const TemplateSchema = Type.Object(
  {
    templateId: Uuid,
    name: Type.String(),
    customerId: Type.String(),
    createdBy: Nullable(Uuid),
    createdEpoch: Epoch,
    createdDate: Iso,
    lastUpdatedBy: Nullable(Uuid),
    lastUpdatedEpoch: Epoch,
    lastUpdatedDate: Iso,
    groupIds: Type.Array(Uuid),
    templateType: Type.Array(Type.String()),
    isDefault: Type.Boolean(),
    actionObjectId: ActionObjectId,
    attributesDefaultValue: Type.Array(DefaultValue),
    templateDenormalized: Type.Array(LegacyGroup),
    accessTemplates: Type.Array(Type.Object({ id: Uuid, name: Type.String() })),
    templateOverride: Type.Optional(TemplateOverride),
    inUse: Type.Boolean(),
  },
  { $id: 'MetadataTemplateAdmin' },
);
export const TemplatePageSchema = Type.Object({
  hitCount: Type.Integer(),
  results: Type.Array(Type.Ref('MetadataTemplateAdmin')),
});

// --- apply ---

export const ApplySchema = Type.Object({
  message: Type.String(),
  actionId: Uuid,
  status: Type.String({ description: 'queued | running | succeeded | failed | cancelled' }),
  pendingChanges: Type.Integer({ description: 'Definition changes waiting when the action was started' }),
});
export const PendingChangesSchema = Type.Object({
  hitCount: Type.Integer(),
  results: Type.Array(
    Type.Object({
      id: Uuid,
      kind: Type.String(),
      subjectType: Type.String(),
      subjectId: Type.String(),
      data: docAs(Type.Unknown(), {
        type: 'object',
        description:
          'By kind: attribute.updated {searchField, fields, previous{name, settings}, current{name, settings}, removedLevels}; attribute.deleted {name, searchField}; template.updated {fields, groups{added, removed}}; group.attributes.changed {added, removed, templates}; vocabulary changes {values added, renamed or removed}',
        properties: {
          searchField: { type: 'string' },
          name: { type: 'string' },
          fields: { type: 'array', items: { type: 'string' }, description: 'The changed fields of the definition' },
          templates: { type: 'array', items: { type: 'string' } },
        },
        additionalProperties: anyJsonDoc('Further details of the change, by kind'),
      }),
      createdBy: Nullable(Uuid),
      createdEpoch: Epoch,
    }),
  ),
});
