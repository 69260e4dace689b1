import { Type, type Static } from 'typebox';

const Id = Type.String({ format: 'uuid' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** Reference §6.1 `AdaptiveTemplateSearch`: accepted as the reference's clients send it. */
export const TemplateSearchSchema = Type.Object(
  {
    from: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, default: 0 })),
    limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 100 }))),
    searchTerm: Type.Optional(
      Nullable(
        Type.Union([Type.Array(Type.String({ maxLength: 500 }), { maxItems: 50 }), Type.String({ maxLength: 500 })]),
      ),
    ),
    sortBy: Type.Optional(
      Nullable(
        Type.Array(
          Type.Object({
            metadataDefinitionSearchField: Type.String({
              maxLength: 200,
              description: 'template_title | title | name | createdEpoch | lastUpdatedEpoch',
            }),
            order: Type.Optional(Type.String({ description: 'asc | desc' })),
          }),
          { maxItems: 3 },
        ),
      ),
    ),
    operation: Type.Optional(Type.String({ description: 'AND (default) | OR between search terms' })),
  },
  { additionalProperties: true },
);
export type TemplateSearch = Static<typeof TemplateSearchSchema>;

export const FieldSchema = Type.Object({
  name: Type.String(),
  label: Type.String(),
  default: Type.String(),
  maxLength: Type.Integer(),
  multiline: Type.Boolean(),
});

/** A template in the reference's asset-like shape (§6.1), plus Tessera's `templateId`, `kind` and `fields`. */
export const AdaptiveTemplateSchema = Type.Object(
  {
    templateId: Id,
    objectId: Id,
    objectType: Type.Literal('Asset'),
    filename: Type.String(),
    kind: Type.Union([Type.Literal('svg'), Type.Literal('html')]),
    fields: Type.Array(FieldSchema),
    customerId: Type.String(),
    createdBy: Id,
    lastUpdatedBy: Id,
    createdEpoch: Type.Integer(),
    lastUpdatedEpoch: Type.Integer(),
    renditionsDocument: Type.Record(Type.String(), Type.String()),
    metadataDocument: Type.Object({
      template_title: Type.String(),
      title: Type.String(),
      description: Type.String(),
      system_mime_type: Type.String(),
      system_created_epoch: Type.Integer(),
      system_created_by: Type.String(),
      system_last_updated_date: Type.Integer(),
    }),
  },
  { $id: 'AdaptiveTemplate', title: 'AdaptiveTemplate' },
);
export type AdaptiveTemplate = Static<typeof AdaptiveTemplateSchema>;

export const TemplateSearchResultSchema = Type.Object({
  hitCount: Type.Integer(),
  totalCount: Type.Integer(),
  from: Type.Integer(),
  limit: Type.Integer(),
  result: Type.Array(Type.Ref('AdaptiveTemplate')),
});

export const LaunchSchema = Type.Object({ templateId: Id }, { additionalProperties: true });
export const LaunchResultSchema = Type.Object({
  url: Type.String({
    description: 'Opens the template in a browser: fill in the fields, see the result, save it as a new asset',
  }),
  expiresAt: Type.String({ format: 'date-time' }),
});

export const RegisterSchema = Type.Object({
  assetId: Id,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  fields: Type.Optional(
    Type.Array(
      Type.Object(
        {
          name: Type.String({ maxLength: 64 }),
          label: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          default: Type.Optional(Type.String({ maxLength: 2000 })),
          maxLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000 })),
          multiline: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
      { maxItems: 100, description: 'Override what is read from the source, by field name' },
    ),
  ),
});
export type RegisterInput = Static<typeof RegisterSchema>;

export const IdParamsSchema = Type.Object({ id: Id });
export const TokenParamsSchema = Type.Object({ token: Type.String({ minLength: 20, maxLength: 600 }) });
export const FillQuerySchema = Type.Object(
  {},
  { additionalProperties: Type.String({ maxLength: 2000 }), description: 'f_<field>=value for each field' },
);
export const SaveSchema = Type.Object(
  {
    filename: Type.Optional(
      Type.String({ maxLength: 200, description: 'Without extension; empty: the template name and the time' }),
    ),
    values: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 2000 }))),
  },
  {
    additionalProperties: Type.String({ maxLength: 2000 }),
    description: 'JSON {values:{field:value}, filename} or a form with f_<field>=value',
  },
);
export const SavedSchema = Type.Object({ assetId: Id, templateId: Id, relationship: Type.Literal('derivative') });
