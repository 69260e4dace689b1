import { api } from './api.ts';

export interface Attribute {
  id: string;
  name: string;
  type: string;
  subType?: string;
  searchField: string;
  isMultipleSelect?: boolean;
  controlledVocabularyId?: string | null;
  dateFormat?: string;
  length?: number;
  isMultiLine?: boolean;
  required?: boolean;
  readonly?: boolean;
  visible?: boolean;
  system?: boolean;
  /** A cascade's levels, in order (each a vocabulary). */
  cascadeFieldsDenormalized?: Attribute[];
  /** A table's columns. */
  tableFieldsDenormalized?: Attribute[];
  isSingleRow?: boolean;
}

export interface Template {
  templateId: string;
  templateName: string;
  isDefault?: boolean;
  metadataGroups: {
    metadataGroupId: string;
    metadataGroupName: string;
    system?: boolean;
    metadataAttributes: Attribute[];
  }[];
}

export interface SecurityTemplate {
  templateId: string;
  templateName: string;
}

let templates: Promise<Template[]> | null = null;
let security: Promise<SecurityTemplate[]> | null = null;

export function metadataTemplates(): Promise<Template[]> {
  templates ??= api<{ template: Template }[]>('GET', '/v1/metadata/template')
    .then((list) => list.map((x) => x.template))
    .catch(() => {
      templates = null;
      return [];
    });
  return templates;
}

/** Security templates the caller may list (administrators); others upload with the organization's default. */
export function securityTemplates(): Promise<SecurityTemplate[]> {
  security ??= api<SecurityTemplate[]>('GET', '/v1/security/template').catch(() => []);
  return security;
}

export function attributesOf(template: Template | undefined): Attribute[] {
  return (template?.metadataGroups ?? []).flatMap((g) => g.metadataAttributes);
}

export interface Vocabulary {
  id: string;
  name: string;
  values: { valueId: string; valueName: string; parentValueId: string | null }[];
}

let vocabs: Promise<Map<string, Vocabulary>> | null = null;

/** Controlled vocabularies by id (their values, for the metadata forms). */
export function vocabularies(): Promise<Map<string, Vocabulary>> {
  vocabs ??= api<
    { metadataDefinitionId: string; metadataDefinitionName: string; metadata?: { values?: Vocabulary['values'] } }[]
  >('GET', '/v1/metadata/vocabulary')
    .then(
      (list) =>
        new Map(
          list.map((v) => [
            v.metadataDefinitionId,
            { id: v.metadataDefinitionId, name: v.metadataDefinitionName, values: v.metadata?.values ?? [] },
          ]),
        ),
    )
    .catch(() => {
      vocabs = null;
      return new Map();
    });
  return vocabs;
}
