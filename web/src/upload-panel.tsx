import { useEffect, useMemo, useState } from 'preact/hooks';
import { fileSize } from './format.ts';
import { t } from './messages.ts';
import {
  attributesOf,
  metadataTemplates,
  securityTemplates,
  type SecurityTemplate,
  type Template,
} from './templates.ts';
import { UploadQueue, type UploadItem } from './upload.ts';

export function useUploads(onStored: () => void, onRestored: () => void): { queue: UploadQueue } {
  const queue = useMemo(() => new UploadQueue(), []);
  // Files a previous page left unfinished carry on (and the panel opens to show them).
  useEffect(() => {
    void queue.restore().then((count) => (count > 0 ? onRestored() : undefined));
  }, [queue]);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Many files finish close together: the library reloads once for them.
    queue.onAssetStored = () => {
      clearTimeout(timer);
      timer = setTimeout(onStored, 400);
    };
  }, [queue]);
  return { queue };
}

function useQueue(queue: UploadQueue): void {
  const [, setTick] = useState(0);
  useEffect(() => queue.subscribe(() => setTick((n) => n + 1)), [queue]);
}

/** The upload queue: batch template and values, a bar per file and in total, retry. */
export function UploadPanel({
  queue,
  onClose,
  onChooseFiles,
  onChooseFolder,
}: {
  queue: UploadQueue;
  onClose: () => void;
  onChooseFiles: () => void;
  onChooseFolder: () => void;
}) {
  useQueue(queue);
  const [templates, setTemplates] = useState<Template[]>([]);
  const [security, setSecurity] = useState<SecurityTemplate[]>([]);
  const [securityLoaded, setSecurityLoaded] = useState(false);
  useEffect(() => {
    void metadataTemplates().then((list) => {
      setTemplates(list);
      if (!queue.settings.metadataTemplateId)
        queue.settings.metadataTemplateId = (list.find((x) => x.isDefault) ?? list[0])?.templateId ?? '';
    });
    void securityTemplates().then((list) => {
      setSecurity(list);
      setSecurityLoaded(true);
      const first = list.find((x) => x.templateName === 'Default') ?? list[0];
      if (queue.settings.securityTemplateIds.length === 0 && first)
        queue.settings.securityTemplateIds = [first.templateId];
    });
  }, []);
  const [, setTick] = useState(0);
  const template = templates.find((x) => x.templateId === queue.settings.metadataTemplateId);
  const editable = attributesOf(template)
    .filter((a) => !a.readonly && !a.system && a.type === 'text')
    .slice(0, 4);
  const totals = queue.totals();
  const percent = totals.bytes > 0 ? Math.round((totals.sent / totals.bytes) * 100) : 0;
  const setValue = (name: string, value: string) => {
    queue.settings.metadata = [...queue.settings.metadata.filter((m) => m.name !== name), { name, value }];
    setTick((n) => n + 1);
  };

  return (
    <section class="panel uploads" role="dialog" aria-modal="false" aria-labelledby="uploads-title">
      <header>
        <h2 id="uploads-title">{t('upload.title')}</h2>
        <button type="button" class="ghost icon" aria-label={t('upload.close')} onClick={onClose}>
          ×
        </button>
      </header>
      <fieldset class="batch">
        <legend>{t('upload.batch')}</legend>
        <label>
          {t('upload.template')}
          <select
            id="upload-template"
            value={queue.settings.metadataTemplateId}
            onChange={(e) => {
              queue.settings.metadataTemplateId = (e.target as HTMLSelectElement).value;
              queue.settings.metadata = [];
              setTick((n) => n + 1);
            }}
          >
            {templates.map((x) => (
              <option key={x.templateId} value={x.templateId}>
                {x.templateName}
              </option>
            ))}
          </select>
        </label>
        {securityLoaded && security.length === 0 && (
          <p class="muted" id="upload-default-security">
            {t('upload.defaultSecurity')}
          </p>
        )}
        {security.length > 1 && (
          <label>
            {t('upload.security')}
            <select
              value={queue.settings.securityTemplateIds[0] ?? ''}
              onChange={(e) => {
                queue.settings.securityTemplateIds = [(e.target as HTMLSelectElement).value];
                setTick((n) => n + 1);
              }}
            >
              {security.map((x) => (
                <option key={x.templateId} value={x.templateId}>
                  {x.templateName}
                </option>
              ))}
            </select>
          </label>
        )}
        {editable.map((a) => (
          <label key={a.id}>
            {a.name}
            <input
              data-batch-field={a.name}
              value={String(queue.settings.metadata.find((m) => m.name === a.name)?.value ?? '')}
              onInput={(e) => setValue(a.name, (e.target as HTMLInputElement).value)}
            />
          </label>
        ))}
      </fieldset>
      <div class="row">
        <button type="button" onClick={onChooseFiles}>
          {t('upload.choose')}
        </button>
        <button type="button" onClick={onChooseFolder}>
          {t('upload.chooseFolder')}
        </button>
        {totals.done > 0 && (
          <button type="button" class="ghost" onClick={() => queue.clearFinished()}>
            {t('upload.clearDone')}
          </button>
        )}
      </div>
      <p class="muted">{t('upload.drop')}</p>
      {totals.count > 0 && (
        <div class="total">
          <span id="upload-total">{t('upload.total', { done: totals.done, count: totals.count, percent })}</span>
          <progress max={100} value={percent} aria-labelledby="upload-total" />
        </div>
      )}
      <ul class="queue">
        {queue.items.map((item) => (
          <QueueRow key={item.id} item={item} onRetry={() => queue.retry(item.id)} />
        ))}
      </ul>
    </section>
  );
}

function QueueRow({ item, onRetry }: { item: UploadItem; onRetry: () => void }) {
  const percent = item.file.size > 0 ? Math.round((Math.min(item.sent, item.file.size) / item.file.size) * 100) : 100;
  const status =
    item.state === 'uploading'
      ? t('upload.uploading', { percent })
      : item.state === 'done'
        ? t('upload.done')
        : item.state === 'failed'
          ? t('upload.failed', { reason: item.error ?? '' })
          : item.state === 'waiting'
            ? t('upload.paused')
            : item.state === 'processing'
              ? t('upload.processing')
              : t('upload.pending');
  const id = `upload-${item.id}`;
  return (
    <li class={`queue-item ${item.state}`} data-state={item.state}>
      <span class="qname" id={id} title={item.path}>
        {item.path}
      </span>
      <span class="qsize">{fileSize(item.file.size)}</span>
      <progress max={100} value={item.state === 'done' ? 100 : percent} aria-labelledby={id} />
      <span class="qstatus" role={item.state === 'failed' ? 'alert' : undefined}>
        {status}
      </span>
      {item.state === 'failed' && (
        <button type="button" onClick={onRetry}>
          {t('upload.retry')}
        </button>
      )}
    </li>
  );
}
