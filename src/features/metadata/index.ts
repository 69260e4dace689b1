/**
 * Metadata: definitions (vocabularies, attributes, groups, templates), their admin API, and the
 * validation library every write path uses.
 *
 * For features that store metadata (assets, bulk edit, collections):
 *
 *   const t = await loadTemplate(db, orgId, templateId);          // undefined → 400/404 as fits
 *   (hot paths: loadTemplateCached — one version read, then the compiled template from memory)
 *   if (!await canUseTemplate(db, principal, templateId)) ...     // access templates
 *   const r = validateMetadata(t, body.metadata, { mode: 'create', applyDefaults: true, path: 'body.metadata' });
 *   if (!r.ok) throw metadataInvalid(r.problems);                 // 400 with every problem
 *   store r.document (canonical legacy: ids, {valueId}, ISO dates) and denormalize(t, r.document)
 *
 *   patch:  validateMetadata(t, body.metadata, { mode: 'patch', current: stored }) → r.document is the merged whole
 *   read:   toSimplified(t, stored) for /assets/asset, presentLegacy(t, stored) for legacy reads
 *
 * Template types: assets may use templates whose templateType includes default or asset
 * (templateUse → 'not_for_assets' otherwise). Action-type templates queue ACTION_OBJECT_JOB
 * ({templateId, actionObjectId?}) on create, update and delete; the assets feature runs it and
 * records the object with setActionObjectId.
 *
 * Definitions change; provide a UsageProbe (what uses a template/attribute/vocabulary, so deletes
 * are refused with 409; src/app.ts hands it to metadataRoutes) and an ApplyHandler (rewrite stored
 * documents on POST /v1/metadata/apply; src/workers.ts hands it to metadataJobHandlers).
 */

export type {
  AttributeDef,
  AttributeType,
  CompiledTemplate,
  DateFormat,
  LegacyItem,
  LegacyValue,
  Problem,
  SimplifiedItem,
  SimplifiedValue,
  VocabRef,
  VocabularyDef,
  VocabularyValue,
} from './validation/model.ts';
export { ATTRIBUTE_TYPES, DATE_FORMATS, compileTemplate, buildVocabulary, slugify } from './validation/model.ts';
export {
  validateMetadata,
  hasValue,
  LIMITS as METADATA_LIMITS,
  type ValidateOptions,
  type ValidationResult,
} from './validation/validate.ts';
export { toSimplified, toLegacy, denormalize, mergeMetadata, presentLegacy } from './validation/encodings.ts';
export { parseDate, formatDate } from './validation/dates.ts';
export { loadCompiledTemplate as loadTemplate, lockTemplateAgainstDelete } from './definitions/definitions.repo.ts';
export { loadTemplateCached } from './definitions/template-cache.ts';
export {
  EMBEDDED_FIELDS,
  EMBEDDED_FIELD_NAMES,
  writableEmbeddedField,
  type EmbeddedField,
} from './definitions/attributes/embedded-fields.ts';
export { seedOrganizationMetadata, seedMissingOrganizations, DEFAULT_TEMPLATE_NAME } from './seed.ts';
export type {
  MetadataRouteHooks,
  MetadataJobHooks,
  UsageProbe,
  UsageKind,
  ApplyHandler,
  ApplyContext,
  DefinitionChange,
} from './hooks.ts';
export {
  canUseTemplate,
  templateUse,
  templatesHiddenFrom,
  templateAccess,
  templateOpenTo,
  OPEN_TEMPLATE,
  type TemplateAccess,
  defaultTemplateId,
  metadataInvalid,
  recordDefinitionChange,
} from './access.ts';
export {
  ACTION_OBJECT_JOB,
  WRITABLE_TEMPLATE_TYPES,
  LEGACY_TEMPLATE_TYPES,
  actionTemplateInfo,
  setActionObjectId,
  servesAssets,
  isActionTemplate,
  type ActionObjectJob,
  type ActionTemplateInfo,
} from './definitions/templates/template-types.ts';

export {
  seesSensitiveData,
  restrictedAttributes,
  hiddenAttributesFor,
  restrictedOfTemplate,
  withoutRestricted,
  restrictedAttributeRefused,
  assertRestrictedUnchanged,
  itemsWithoutRestricted,
  assertNoRestrictedItems,
  keepRestrictedCells,
  NO_RESTRICTED,
  type RestrictedAttributes,
} from './definitions/restricted.ts';

export { metadataRoutes } from './metadata.routes.ts';
export { APPLY_ACTION } from './apply/apply.service.ts';
export { metadataJobHandlers } from './metadata.jobs.ts';
export {
  denormalizedDoc,
  legacyTableDoc,
  legacyTableInputDoc,
  legacyValueDoc,
  legacyValueInputDoc,
  metadataItemInputDoc,
  simplifiedOrSystemValueDoc,
  simplifiedValueDoc,
  simplifiedValueInputDoc,
} from './validation/value-docs.ts';
