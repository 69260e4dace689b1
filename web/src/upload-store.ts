/**
 * The upload queue kept in IndexedDB, so a reload (or a closed tab) resumes unfinished uploads:
 * each file's bytes (the File, which IndexedDB keeps as a Blob), its batch settings, and for a
 * multipart upload its upload id, part URLs and the ETags of the parts already stored.
 */

export interface StoredUpload {
  key: string;
  file: Blob;
  name: string;
  type: string;
  path: string;
  versionOf?: string;
  settings?: unknown;
  objectId?: string;
  url?: string;
  multipart?: {
    uploadId: string;
    fileId: string;
    objectId: string;
    partSize: number;
    urls: { partNumber: number; url: string }[];
    etags: [number, string][];
  };
}

const DB = 'tessera-uploads';
const STORE = 'queue';
let opened: Promise<IDBDatabase | null> | undefined;

function open(): Promise<IDBDatabase | null> {
  opened ??= new Promise((resolve) => {
    if (typeof indexedDB === 'undefined') return resolve(null);
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: 'key' });
    request.onsuccess = () => resolve(request.result);
    // Private windows may refuse IndexedDB: the queue then lives as long as the page.
    request.onerror = () => resolve(null);
  });
  return opened;
}

async function run<T>(
  mode: IDBTransactionMode,
  work: (store: IDBObjectStore) => IDBRequest<T>,
): Promise<T | undefined> {
  const db = await open();
  if (!db) return undefined;
  return new Promise((resolve) => {
    const tx = db.transaction(STORE, mode);
    const request = work(tx.objectStore(STORE));
    tx.oncomplete = () => resolve(request.result);
    tx.onerror = () => resolve(undefined);
    tx.onabort = () => resolve(undefined);
  });
}

export const uploadStore = {
  put: (record: StoredUpload) => run('readwrite', (s) => s.put(record)),
  remove: (key: string) => run('readwrite', (s) => s.delete(key)),
  all: async (): Promise<StoredUpload[]> =>
    (await run('readonly', (s) => s.getAll() as IDBRequest<StoredUpload[]>)) ?? [],
  clear: () => run('readwrite', (s) => s.clear()),
};
