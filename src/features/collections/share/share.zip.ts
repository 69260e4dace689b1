import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { Zip, ZipDeflate, ZipPassThrough } from 'fflate';
import type { BlobStore, PutResult } from '../../../core/storage/blob-store.ts';

/** One file of an archive: its name inside the zip and the stored object holding its bytes. */
export interface ZipEntrySource {
  /** Who the entry stands for (reported when its bytes are missing). */
  id: string;
  name: string;
  blobKey: string;
  contentType: string | null;
  mtime: number;
}

/** fflate writes classic ZIP (no ZIP64): offsets and sizes must stay below 4 GiB. */
export const ZIP_LIMIT_BYTES = 0xffff_ffff - 64 * 1024 * 1024;

/** Already-compressed media gains nothing from DEFLATE; text-like content does. */
function compressible(contentType: string | null): boolean {
  if (!contentType) return false;
  return contentType.startsWith('text/') || /(json|xml|svg|javascript|csv)/.test(contentType);
}

/** `name`, made safe for a zip entry (no directories, no control characters) and unique within `taken`. */
export function entryName(filename: string, fallback: string, taken: Set<string>): string {
  let base = filename
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, '_')
    .replace(/^\.+/, '')
    .trim()
    .slice(0, 200);
  if (base === '') base = fallback;
  const dot = base.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ''];
  let name = base;
  for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${stem} (${n})${ext}`;
  taken.add(name.toLowerCase());
  return name;
}

/**
 * Streams a zip of `entries` into the blob store under `key`: each stored object is read chunk by
 * chunk and pushed through fflate straight into the store's writer, waiting whenever the writer
 * is behind, so memory holds a few chunks, never a whole file. Entries whose object is missing are
 * skipped and returned. The store writes atomically: a failed build leaves no partial zip.
 */
export async function writeZip(
  blobs: BlobStore,
  key: string,
  entries: readonly ZipEntrySource[],
  stop?: () => Promise<boolean>,
): Promise<PutResult & { missing: ZipEntrySource[] }> {
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  const zip = new Zip((error, chunk, final) => {
    if (error) {
      out.destroy(error);
      return;
    }
    out.write(chunk);
    if (final) out.end();
  });
  const putting = blobs.put(key, out, { contentType: 'application/zip' });
  // Observed below; this keeps an early failure from being reported as unhandled meanwhile.
  putting.catch(() => undefined);
  const missing: ZipEntrySource[] = [];
  let source: Readable | null = null;
  try {
    for (const entry of entries) {
      if (stop && (await stop())) throw new Error('stopped');
      source = await blobs.get(entry.blobKey);
      if (!source) {
        missing.push(entry);
        continue;
      }
      const file = compressible(entry.contentType)
        ? new ZipDeflate(entry.name, { level: 6 })
        : new ZipPassThrough(entry.name);
      file.mtime = new Date(entry.mtime);
      zip.add(file);
      for await (const chunk of source) {
        file.push(chunk instanceof Uint8Array ? chunk : Buffer.from(chunk as string));
        if (out.writableNeedDrain) await Promise.race([once(out, 'drain'), putting]);
      }
      file.push(new Uint8Array(0), true);
      source = null;
    }
    zip.end();
  } catch (error) {
    source?.destroy();
    zip.terminate();
    out.destroy(error as Error);
    await putting.catch(() => undefined);
    throw error;
  }
  return { ...(await putting), missing };
}
