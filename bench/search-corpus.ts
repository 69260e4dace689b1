// The generated corpus of the search benchmark (research note §D.2): titles of 3–6 words and
// descriptions of 10–20 words drawn Zipf-like from a 20,000-word vocabulary, 3 keywords of 500,
// 20 metadata templates, 8 file types, 50 security templates (the benchmark user may view 5: ≈10 %).
// Written straight into the index tables with better-sqlite3 in 10,000-row transactions, and cached
// in the temporary directory so later runs reuse it.
import { existsSync, renameSync, rmSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import { aclText, documentTokens } from '../src/features/search/search.tokenize.ts';

export const VOCAB = 20_000;
export const TEMPLATES = 50;
export const VISIBLE_TEMPLATES = 5;
const FILE_TYPES = ['jpg', 'png', 'tif', 'pdf', 'mp4', 'psd', 'svg', 'webp'];
const KEYWORDS = 500;

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function vocabulary(): string[] {
  const r = rng(7);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const seen = new Set<string>();
  const out: string[] = [];
  while (out.length < VOCAB) {
    const len = 3 + Math.floor(r() * 7);
    let w = '';
    for (let i = 0; i < len; i++) w += letters[Math.floor(r() * 26)];
    if (!seen.has(w)) {
      seen.add(w);
      out.push(w);
    }
  }
  return out;
}

export function zipfSampler(n: number, r: () => number): () => number {
  const cum = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += 1 / (i + 1);
    cum[i] = total;
  }
  return () => {
    const x = r() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export interface CorpusIds {
  orgId: string;
  templateIds: string[];
  metadataTemplateNames: string[];
}

const uuid = (r: () => number) => {
  const h = () =>
    Math.floor(r() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  const s = h() + h() + h() + h();
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-7${s.slice(13, 16)}-8${s.slice(17, 20)}-${s.slice(20, 32)}`;
};

/** Fills `file` (already migrated, with the organization and templates of `ids`) with `n` documents. */
export function generateCorpus(file: string, n: number, ids: CorpusIds, log: (s: string) => void): void {
  const tmp = `${file}.part`;
  if (existsSync(tmp)) rmSync(tmp);
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const words = vocabulary();
  const r = rng(42);
  const zipf = zipfSampler(VOCAB, r);
  const insDoc = db.prepare(
    'insert into search_docs (doc_no, org_id, asset_id, file_id, original_file_id, filename, filename_key, file_type, metadata_template_id, deleted, current_version, created_epoch, updated_epoch, record, indexed_at) values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)',
  );
  const insFts = db.prepare(
    'insert into search_fts (rowid, filename, asset, metadata, content, acl) values (?,?,?,?,?,?)',
  );
  const insTpl = db.prepare('insert into search_doc_templates (org_id, doc_no, template_id) values (?,?,?)');
  const insFacet = db.prepare(
    'insert or ignore into search_doc_facets (org_id, doc_no, facet_key, value_key, facet, value) values (?,?,?,?,?,?)',
  );
  const t0 = Date.UTC(2020, 0, 1);
  const span = 5 * 365 * 86_400_000;
  const started = performance.now();
  const batch = 10_000;
  for (let start = 0; start < n; start += batch) {
    db.transaction(() => {
      for (let i = start; i < Math.min(n, start + batch); i++) {
        const no = i + 1;
        const pick = () => words[zipf()]!;
        const title = Array.from({ length: 3 + Math.floor(r() * 4) }, pick).join(' ');
        const description = Array.from({ length: 10 + Math.floor(r() * 11) }, pick).join(' ');
        const type = FILE_TYPES[Math.floor(r() * FILE_TYPES.length)]!;
        const filename = `${pick()}-${pick()}.${type}`;
        const tpl = ids.templateIds[Math.floor(r() * TEMPLATES)]!;
        const mtIndex = Math.floor(r() * ids.metadataTemplateNames.length);
        const kws = [0, 1, 2].map(() => `kw${Math.floor(r() * KEYWORDS)}`);
        const created = t0 + Math.floor(r() * span);
        const updated = created + Math.floor(r() * 86_400_000 * 30);
        const assetId = uuid(r);
        const fileId = uuid(r);
        const tokens = documentTokens({
          filename,
          asset: `${assetId} ${fileId} ${fileId}`,
          metadata: `${title} ${description} ${kws.join(' ')}`,
          content: '',
        });
        const record = JSON.stringify({
          objectId: assetId,
          fileId,
          originalFileId: fileId,
          filename,
          objectType: 'Asset',
          currentVersion: 'Y',
          createdEpoch: created,
          lastUpdatedEpoch: updated,
          metadataDenormalized: { title, keywords: kws },
        });
        insDoc.run(
          no,
          ids.orgId,
          assetId,
          fileId,
          fileId,
          filename,
          filename,
          type,
          null,
          0,
          1,
          created,
          updated,
          record,
          Date.now(),
        );
        insFts.run(
          no,
          tokens.filename.join(' '),
          tokens.asset.join(' '),
          tokens.metadata.join(' '),
          '',
          aclText([tpl], false, true),
        );
        insTpl.run(ids.orgId, no, tpl);
        insFacet.run(ids.orgId, no, 'file type', type, 'File Type', type);
        const mt = ids.metadataTemplateNames[mtIndex]!;
        insFacet.run(ids.orgId, no, 'metadata template', mt.toLowerCase(), 'Metadata Template', mt);
        for (const kw of kws) insFacet.run(ids.orgId, no, 'keywords', kw, 'Keywords', kw);
      }
    })();
    if ((start / batch) % 10 === 0)
      log(`  generated ${Math.min(n, start + batch)} of ${n} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  db.exec("insert into search_fts(search_fts) values('optimize')");
  db.exec('analyze');
  db.close();
  void renameSync;
}

/** Term ranks in the Zipf vocabulary: 0 is the most common word. */
export function termAt(rank: number): string {
  return vocabulary()[rank]!;
}
