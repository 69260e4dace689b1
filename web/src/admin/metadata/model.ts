import { api, reason } from '../../api.ts';
import type { Attribute as FormAttribute } from '../../templates.ts';
import { isForbidden } from '../common.tsx';

/** The metadata model as the admin API answers it (docs/metadata.md). */

export const TYPES = ['text', 'date', 'controlledVocabulary', 'cascade', 'table'] as const;
export type AttributeType = (typeof TYPES)[number];
export const DATE_FORMATS = [
  'MM/dd/yyyy',
  'dd/MM/yyyy',
  'yyyy-MM-dd',
  'yyyy/MM/dd',
  'dd.MM.yyyy',
  'MM-dd-yyyy',
  'dd-MM-yyyy',
];
export const FLAGS = ['required', 'readonly', 'visible', 'facetable', 'sortable', 'isRestricted'] as const;
export type Flag = (typeof FLAGS)[number];

export interface Level {
  id: string;
  name: string;
  controlledVocabularyId: string;
  isMultipleSelect: boolean;
  required: boolean;
}

export interface Attribute extends Record<Flag, boolean> {
  id: string;
  name: string;
  type: string;
  searchField: string;
  isMultipleSelect: boolean;
  controlledVocabularyId: string | null;
  dateFormat: string;
  length: number | null;
  isMultiLine: boolean;
  system: boolean;
  isSingleRow?: boolean;
  tableFieldsDenormalized?: Attribute[];
  cascadeFieldsDenormalized?: Level[];
}

export interface VocabValue {
  valueId: string;
  valueName: string;
  parentValueId: string | null;
}

export interface Vocabulary {
  metadataDefinitionId: string;
  metadataDefinitionName: string;
  metadata: { values: VocabValue[]; searchable: boolean };
  usedBy: { id: string; name: string }[];
}

export interface Group {
  id: string;
  name: string;
  description: string;
  isGroupNameVisible: boolean;
  system: boolean;
  attributeIds: string[];
  templates: { id: string; name: string }[];
}

export interface Template {
  templateId: string;
  name: string;
  groupIds: string[];
  templateType: string[];
  isDefault: boolean;
  inUse: boolean;
}

export type Load<T> =
  | { state: 'loading' }
  | { state: 'forbidden' }
  | { state: 'error'; message: string }
  | { state: 'ready'; value: T };

export async function loadInto<T>(set: (l: Load<T>) => void, get: () => Promise<T>): Promise<void> {
  try {
    set({ state: 'ready', value: await get() });
  } catch (e) {
    set(isForbidden(e) ? { state: 'forbidden' } : { state: 'error', message: reason(e) });
  }
}

export const listAttributes = () => api<Attribute[]>('GET', '/v1/metadata/attributes');
export const listVocabularies = () => api<Vocabulary[]>('GET', '/v1/metadata/vocabulary');

/** Every page of a paged list (groups, templates: at most 100 a page). */
async function allPages<T>(path: string, sortField: string): Promise<T[]> {
  const out: T[] = [];
  for (let from = 0; ; from += 100) {
    const page = await api<{ hitCount: number; results: T[] }>(
      'GET',
      `${path}?from=${from}&limit=100&sortField=${sortField}`,
    );
    out.push(...page.results);
    if (page.results.length < 100 || out.length >= page.hitCount) return out;
  }
}
export const listGroups = () => allPages<Group>('/v1/metadata/groups', 'groupName');
export const listTemplates = () => allPages<Template>('/v1/metadata/templates', 'templateName');

/** An attribute as the asset page's form generator (../../metadata-fields.tsx) takes it. */
export function formAttribute(a: Attribute): FormAttribute {
  return {
    id: a.id,
    name: a.name,
    type: a.type,
    searchField: a.searchField,
    isMultipleSelect: a.isMultipleSelect,
    controlledVocabularyId: a.controlledVocabularyId,
    dateFormat: a.dateFormat,
    length: a.length ?? undefined,
    isMultiLine: a.isMultiLine,
    required: a.required,
    readonly: a.readonly,
    visible: a.visible,
    system: a.system,
    isSingleRow: a.isSingleRow,
    cascadeFieldsDenormalized: a.cascadeFieldsDenormalized?.map((l) => ({
      id: l.id,
      name: l.name,
      type: 'controlledVocabulary',
      searchField: '',
      controlledVocabularyId: l.controlledVocabularyId,
      isMultipleSelect: l.isMultipleSelect,
      required: l.required,
    })),
    tableFieldsDenormalized: a.tableFieldsDenormalized?.map(formAttribute),
  };
}
