import { api, reason } from './api.ts';
import { metadataTemplates, securityTemplates } from './templates.ts';
import { uploadStore, type StoredUpload } from './upload-store.ts';

export type UploadState = 'pending' | 'uploading' | 'processing' | 'done' | 'failed' | 'waiting';

export interface UploadItem {
  id: number;
  /** Its record in IndexedDB (upload-store.ts). */
  key: string;
  file: File;
  path: string;
  state: UploadState;
  sent: number;
  error?: string;
  objectId?: string;
  /** A new version of this asset (its fileId) instead of a new asset. */
  versionOf?: string;
  /** The batch's template and values when the file was added (a restored file keeps them). */
  settings?: BatchSettings;
  /** A single presigned upload's URL. */
  url?: string;
  /** Multipart progress kept across retries: parts already stored are not sent again. */
  multipart?: {
    uploadId: string;
    fileId: string;
    objectId: string;
    partSize: number;
    urls: { partNumber: number; url: string }[];
    etags: Map<number, string>;
  };
}

export interface BatchSettings {
  metadataTemplateId: string;
  securityTemplateIds: string[];
  metadata: { name: string; value: unknown }[];
}

type Listener = () => void;

const CONCURRENCY = 3;
const MAX_ATTEMPTS = 6;

/** The upload queue: per-file and total progress, retries, resumable multipart uploads. */
export class UploadQueue {
  items: UploadItem[] = [];
  settings: BatchSettings = { metadataTemplateId: '', securityTemplateIds: [], metadata: [] };
  private nextId = 1;
  private running = 0;
  private readonly listeners = new Set<Listener>();
  onAssetStored?: () => void;

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  add(files: { file: File; path: string }[], versionOf?: string): void {
    for (const { file, path } of files) {
      const item: UploadItem = { id: this.nextId++, key: newKey(), file, path, state: 'pending', sent: 0, versionOf };
      this.items.push(item);
      void this.persist(item);
    }
    this.changed();
    this.pump();
  }

  /**
   * Takes back the files a previous page left unfinished (a reload, a closed tab, a crash): their
   * bytes, batch settings, and a multipart upload's id and stored parts, which are not sent again.
   * Returns how many were taken back.
   */
  async restore(): Promise<number> {
    const records = await uploadStore.all();
    const known = new Set(this.items.map((i) => i.key));
    let count = 0;
    for (const r of records) {
      if (known.has(r.key)) continue;
      const file = r.file instanceof File ? r.file : new File([r.file], r.name, { type: r.type });
      const item: UploadItem = {
        id: this.nextId++,
        key: r.key,
        file,
        path: r.path,
        state: 'pending',
        sent: 0,
        versionOf: r.versionOf,
        settings: r.settings as BatchSettings | undefined,
        objectId: r.objectId,
        url: r.url,
        multipart: r.multipart ? { ...r.multipart, etags: new Map(r.multipart.etags) } : undefined,
      };
      if (item.multipart) item.sent = storedBytes(item, item.multipart);
      this.items.push(item);
      count++;
    }
    if (count > 0) {
      this.changed();
      this.pump();
    }
    return count;
  }

  /** Forgets every unfinished upload (sign-out: the next person must not resume them). */
  async forget(): Promise<void> {
    this.items = [];
    await uploadStore.clear();
    this.changed();
  }

  private persist(item: UploadItem): Promise<unknown> {
    const record: StoredUpload = {
      key: item.key,
      file: item.file,
      name: item.file.name,
      type: item.file.type,
      path: item.path,
      versionOf: item.versionOf,
      settings: item.settings ?? (item.versionOf ? undefined : structuredClone(this.settings)),
      objectId: item.objectId,
      url: item.url,
      multipart: item.multipart ? { ...item.multipart, etags: [...item.multipart.etags.entries()] } : undefined,
    };
    item.settings = record.settings as BatchSettings | undefined;
    return uploadStore.put(record);
  }

  retry(id: number): void {
    const item = this.items.find((i) => i.id === id);
    if (!item || item.state !== 'failed') return;
    item.state = 'pending';
    item.error = undefined;
    this.changed();
    this.pump();
  }

  clearFinished(): void {
    this.items = this.items.filter((i) => i.state !== 'done');
    this.changed();
  }

  totals(): { count: number; done: number; bytes: number; sent: number } {
    let bytes = 0;
    let sent = 0;
    let done = 0;
    for (const i of this.items) {
      bytes += i.file.size;
      sent += i.state === 'done' || i.state === 'processing' ? i.file.size : i.sent;
      if (i.state === 'done') done++;
    }
    return { count: this.items.length, done, bytes, sent };
  }

  private pump(): void {
    while (this.running < CONCURRENCY) {
      const next = this.items.find((i) => i.state === 'pending');
      if (!next) return;
      this.running++;
      next.state = 'uploading';
      this.changed();
      void this.run(next).finally(() => {
        this.running--;
        this.changed();
        this.pump();
      });
    }
  }

  private async run(item: UploadItem): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.upload(item);
        item.state = 'done';
        void uploadStore.remove(item.key);
        this.onAssetStored?.();
        return;
      } catch (error) {
        const retriable =
          error instanceof NetworkError ||
          (error as { status?: number }).status === 503 ||
          (error as { status?: number }).status === 429;
        if (!retriable || attempt >= MAX_ATTEMPTS) {
          item.state = 'failed';
          item.error = reason(error);
          return;
        }
        item.state = 'waiting';
        this.changed();
        await waitForNetwork(Math.min(30_000, 1000 * 2 ** attempt));
        item.state = 'uploading';
        this.changed();
      }
    }
  }

  /** The organization's default templates, until the person picks others for the batch. */
  private async defaults(settings: BatchSettings): Promise<void> {
    if (!settings.metadataTemplateId) {
      const list = await metadataTemplates();
      settings.metadataTemplateId ||= (list.find((x) => x.isDefault) ?? list[0])?.templateId ?? '';
    }
    if (settings.securityTemplateIds.length === 0) {
      const list = await securityTemplates();
      const first = list.find((x) => x.templateName === 'Default') ?? list[0];
      if (first && settings.securityTemplateIds.length === 0) settings.securityTemplateIds = [first.templateId];
    }
  }

  private async upload(item: UploadItem): Promise<void> {
    const settings = item.settings ?? this.settings;
    if (!item.versionOf) await this.defaults(settings);
    if (!item.objectId) {
      const body: Record<string, unknown> = {
        filename: item.file.name,
        filesize: item.file.size,
        contentType: item.file.type || undefined,
      };
      if (item.versionOf) body.originalFileId = item.versionOf;
      else {
        if (settings.metadataTemplateId) body.metadataTemplateId = settings.metadataTemplateId;
        if (settings.securityTemplateIds.length > 0) body.securityTemplateIds = settings.securityTemplateIds;
        const values = settings.metadata.filter((m) => m.value !== '' && m.value !== undefined && m.value !== null);
        if (values.length > 0) body.metadata = values;
      }
      const created = await api<{
        data: {
          objectId: string;
          fileId: string;
          url?: string;
          uploadId?: string;
          urls?: { partNumber: number; url: string }[];
          partSize?: number;
        };
      }>('POST', '/v1/assets/asset', body);
      const d = created.data;
      item.objectId = d.objectId;
      if (d.uploadId && d.urls) {
        item.multipart = {
          uploadId: d.uploadId,
          fileId: d.fileId,
          objectId: d.objectId,
          partSize: d.partSize ?? Math.ceil(item.file.size / d.urls.length),
          urls: d.urls,
          etags: new Map(),
        };
      } else {
        item.url = d.url;
      }
      await this.persist(item);
    }
    if (item.multipart) return this.uploadParts(item, item.multipart);
    const url = item.url!;
    item.sent = 0;
    await put(url, item.file, item.file.type || 'application/octet-stream', (n) => {
      item.sent = n;
      this.changed();
    });
  }

  private async uploadParts(item: UploadItem, mp: NonNullable<UploadItem['multipart']>): Promise<void> {
    for (const part of mp.urls) {
      if (mp.etags.has(part.partNumber)) continue;
      const start = (part.partNumber - 1) * mp.partSize;
      const blob = item.file.slice(start, Math.min(item.file.size, start + mp.partSize));
      const base = storedBytes(item, mp);
      const etag = await put(part.url, blob, 'application/octet-stream', (n) => {
        item.sent = base + n;
        this.changed();
      });
      mp.etags.set(part.partNumber, etag);
      await this.persist(item);
    }
    await api('POST', '/v1/asset/complete', {
      action: 'complete',
      uploadId: mp.uploadId,
      fileId: mp.fileId,
      parts: [...mp.etags.entries()].sort((a, b) => a[0] - b[0]).map(([partNumber, etag]) => ({ partNumber, etag })),
    });
  }
}

export class NetworkError extends Error {}

function newKey(): string {
  return crypto.randomUUID?.() ?? `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

/** Bytes of the parts already stored. */
function storedBytes(item: UploadItem, mp: NonNullable<UploadItem['multipart']>): number {
  return [...mp.etags.keys()].reduce(
    (sum, n) => sum + Math.min(mp.partSize, item.file.size - (n - 1) * mp.partSize),
    0,
  );
}

/** PUT with upload progress (fetch has none); resolves with the part's ETag (header, or the body's `etag`). */
function put(url: string, body: Blob, contentType: string, progress: (sent: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.setRequestHeader('content-type', contentType);
    xhr.upload.onprogress = (e) => progress(e.loaded);
    xhr.onerror = () => reject(new NetworkError('the connection was lost'));
    xhr.ontimeout = () => reject(new NetworkError('the upload timed out'));
    xhr.onload = () => {
      let data: { etag?: string; message?: string } = {};
      try {
        data = JSON.parse(xhr.responseText || '{}');
      } catch {
        // S3 answers an empty body.
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.getResponseHeader('etag') ?? data.etag ?? '');
      else reject(Object.assign(new Error(data.message ?? `HTTP ${xhr.status}`), { status: xhr.status }));
    };
    xhr.send(body);
  });
}

function waitForNetwork(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      removeEventListener('online', done);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => (navigator.onLine ? done() : undefined), ms);
    if (!navigator.onLine) addEventListener('online', done);
  });
}

/** Files from a drop, folders walked recursively (their paths kept). */
export async function filesFromDrop(data: DataTransfer): Promise<{ file: File; path: string }[]> {
  const entries = [...data.items].map((i) => i.webkitGetAsEntry?.()).filter((e): e is FileSystemEntry => Boolean(e));
  if (entries.length === 0) return [...data.files].map((file) => ({ file, path: file.name }));
  const out: { file: File; path: string }[] = [];
  const walk = async (entry: FileSystemEntry): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
      out.push({ file, path: entry.fullPath.replace(/^\//, '') });
    } else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader();
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
        if (batch.length === 0) break;
        for (const child of batch) await walk(child);
      }
    }
  };
  for (const entry of entries) await walk(entry);
  return out.filter((f) => !f.file.name.startsWith('.'));
}
