import { useState } from 'preact/hooks';
import { Field } from '../../metadata-fields.tsx';
import { t } from '../../messages.ts';
import type { Vocabulary as FormVocabulary } from '../../templates.ts';
import type { Model } from './metadata-model.tsx';
import { formAttribute } from './model.ts';

/**
 * The form a template produces, drawn by the asset page's form generator (../../metadata-fields.tsx)
 * from the groups and attribute order being edited: what an uploader will see, live. Values typed
 * here are not saved.
 */
export function FormPreview({
  model,
  groups,
}: {
  model: Model;
  groups: { id: string; name: string; visible: boolean; attributeIds: string[] }[];
}) {
  const [values, setValues] = useState<Record<string, unknown>>({});
  const vocabs = new Map<string, FormVocabulary>(
    model.vocabularies.map((v) => [
      v.metadataDefinitionId,
      { id: v.metadataDefinitionId, name: v.metadataDefinitionName, values: v.metadata.values },
    ]),
  );
  const byId = new Map(model.attributes.map((a) => [a.id, a]));
  return (
    <section class="preview" aria-labelledby="template-preview-title" id="template-preview">
      <h3 id="template-preview-title">{t('meta.preview')}</h3>
      <p class="hint small">{t('meta.previewHint')}</p>
      {groups.map((g) => (
        <fieldset key={g.id} class="preview-group" data-group={g.name}>
          <legend class={g.visible ? '' : 'visually-hidden'}>{g.name}</legend>
          {g.attributeIds
            .map((id) => byId.get(id))
            .filter((a) => a && a.visible && !a.readonly)
            .map((a) => (
              <Field
                key={a!.id}
                attribute={formAttribute(a!)}
                value={values[a!.name] ?? null}
                vocabs={vocabs}
                problems={{}}
                onChange={(v) => setValues({ ...values, [a!.name]: v })}
              />
            ))}
        </fieldset>
      ))}
    </section>
  );
}
