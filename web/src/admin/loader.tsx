import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { reason } from '../api.ts';
import { t, type MessageKey } from '../messages.ts';
import { linkClick } from '../router.ts';

/** What every administration section receives. */
export interface SectionProps {
  id?: string;
  user: { userId: string; userName: string };
}

/**
 * The administration pages, each its own chunk: nothing of them is in the first load; a section's
 * script (and its stylesheet) is fetched when it is opened.
 */
const SECTIONS: { id: string; label: MessageKey; load: () => Promise<{ default: ComponentType<SectionProps> }> }[] = [
  { id: 'integrations', label: 'admin.section.integrations', load: () => import('./integrations.tsx') },
  { id: 'people', label: 'admin.section.people', load: () => import('./people.tsx') },
  { id: 'cdn', label: 'admin.section.cdn', load: () => import('./cdn.tsx') },
  { id: 'metadata', label: 'admin.section.metadata', load: () => import('./metadata/metadata-model.tsx') },
  { id: 'recycle-bin', label: 'admin.section.recycleBin', load: () => import('./recycle-bin.tsx') },
  { id: 'actions', label: 'admin.section.actions', load: () => import('./actions.tsx') },
];

export function AdminPage({ section, id, user }: { section: string; id?: string; user: SectionProps['user'] }) {
  const current = SECTIONS.find((s) => s.id === (section || SECTIONS[0]!.id));
  const [loaded, setLoaded] = useState<{ id: string; Component: ComponentType<SectionProps> } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!current || loaded?.id === current.id) return;
    setError(null);
    current.load().then(
      (m) => setLoaded({ id: current.id, Component: m.default }),
      (e) => setError(reason(e)),
    );
  }, [current?.id]);
  return (
    <div class="page admin">
      <nav aria-label={t('admin.sections')} class="subnav">
        {SECTIONS.map((s) => (
          <a
            key={s.id}
            href={`/app/admin/${s.id}`}
            aria-current={s.id === current?.id ? 'page' : undefined}
            onClick={(e) => linkClick(e, `/app/admin/${s.id}`)}
          >
            {t(s.label)}
          </a>
        ))}
      </nav>
      {!current && (
        <p role="alert" class="error">
          {t('admin.notFound')}
        </p>
      )}
      {error && (
        <p role="alert" class="error">
          {t('admin.loadFailed', { reason: error })}
        </p>
      )}
      {current &&
        !error &&
        (loaded?.id === current.id ? (
          <loaded.Component id={id} user={user} />
        ) : (
          <p class="muted" role="status">
            {t('admin.loading')}
          </p>
        ))}
    </div>
  );
}
