import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { sql } from 'kysely';
import type { Db } from '../../../core/db/connect.ts';
import { OrgIndex, installIndex, removalPosition, type FacetEntry } from './search.memindex.ts';

/**
 * Snapshots of the in-memory index (docs/decisions/0011-search-index-at-start.md): the typed arrays
 * of an organization's index written to `<data dir>/search-index/<org>.bin` with the indexing time
 * they reflect, read back at start with one file read instead of a load from SQLite (20 s at
 * 1,000,000 assets), then brought up to date by the usual look (documents indexed since).
 *
 * A snapshot is used only when all of these hold, else it is deleted and the index is built again:
 * its format and checksum are right; the database's schema (its newest migration) is the one it was
 * written under; the database names this very snapshot (`search_index_state`, written with it — a
 * restored or other database does not); and every document the database indexed up to the
 * snapshot's time is in it. Documents removed since are dropped (they are missing from the
 * database); documents indexed since are read again by the first look.
 */
const MAGIC = 'tessera-search-index';
const FORMAT = 1;
const stateKey = (orgId: string) => `memindex-snapshot:${orgId}`;

export const snapshotDir = (dataDir: string) => join(dataDir, 'search-index');
const snapshotFile = (dataDir: string, orgId: string) => join(snapshotDir(dataDir), `${orgId}.bin`);

interface Header {
  magic: string;
  format: number;
  id: string;
  schema: string;
  orgId: string;
  seenIndexedAt: number;
  capacity: number;
  tplIds: string[];
  dict: FacetEntry[];
  terms: string[];
  arrays: { name: string; bytes: number }[];
  crc: number;
}

async function schemaVersion(db: Db): Promise<string> {
  const row = (await sql<{ m: string | null }>`select max(name) as m from kysely_migration`.execute(db)).rows[0];
  return row?.m ?? '';
}

const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** Writes the organization's index as it stands (copied at once, written in the background). */
export async function writeSnapshot(db: Db, dataDir: string, idx: OrgIndex): Promise<void> {
  const schema = await schemaVersion(db);
  const version = idx.version;
  // Facet rows compacted (the load's rows with the changed documents' rows in place).
  const facetStart = new Int32Array(idx.capacity + 1);
  const facetParts: Int32Array[] = [];
  let total = 0;
  for (let d = 0; d < idx.capacity; d++) {
    const ids = idx.facetsOf(d);
    facetParts.push(ids);
    total += ids.length;
    facetStart[d + 1] = total;
  }
  const facetIds = new Int32Array(total);
  for (let d = 0, at = 0; d < facetParts.length; d++) {
    facetIds.set(facetParts[d]!, at);
    at += facetParts[d]!.length;
  }
  const moreDocs = [...idx.tplMore.keys()];
  const moreStart = new Int32Array(moreDocs.length + 1);
  const moreIds: number[] = [];
  moreDocs.forEach((d, i) => {
    moreIds.push(...idx.tplMore.get(d)!);
    moreStart[i + 1] = moreIds.length;
  });
  const terms = [...idx.terms.entries()];
  const arrays: [string, ArrayBufferView][] = [
    ['state', idx.state.slice()],
    ['created', idx.created.slice()],
    ['updated', idx.updated.slice()],
    ['tpl1', idx.tpl1.slice()],
    ['facetStart', facetStart],
    ['facetIds', facetIds],
    ['moreDocs', Int32Array.from(moreDocs)],
    ['moreStart', moreStart],
    ['moreIds', Int32Array.from(moreIds)],
    ...terms.map(([, b], i): [string, ArrayBufferView] => [`term${i}`, b.slice()]),
  ];
  const body = Buffer.concat(arrays.map(([, a]) => bytesOf(a)));
  const header: Header = {
    magic: MAGIC,
    format: FORMAT,
    id: randomUUID(),
    schema,
    orgId: idx.orgId,
    // Settled: nothing later can carry that time; else documents of that time are read again.
    seenIndexedAt: idx.settled ? idx.seenIndexedAt : idx.seenIndexedAt - 1,
    capacity: idx.capacity,
    tplIds: [...idx.tplIds.entries()].sort((a, b) => a[1] - b[1]).map(([k]) => k),
    dict: idx.dict.map((e) => ({ ...e })),
    terms: terms.map(([k]) => k),
    arrays: arrays.map(([name, a]) => ({ name, bytes: a.byteLength })),
    crc: crc32(body),
  };
  const head = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length);
  mkdirSync(snapshotDir(dataDir), { recursive: true });
  const file = snapshotFile(dataDir, idx.orgId);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, Buffer.concat([len, head, body]));
  await rename(tmp, file);
  idx.snapshotVersion = version;
  // The database names the snapshot that belongs to it (a restored copy names an older one or none).
  await db.deleteFrom('search_index_state').where('key', '=', stateKey(idx.orgId)).execute();
  await db
    .insertInto('search_index_state')
    .values({ key: stateKey(idx.orgId), value: header.id })
    .execute();
}

export type SnapshotOutcome = 'loaded' | 'missing' | 'stale' | 'corrupt';

/** Reads the organization's snapshot into the cache; anything but 'loaded' leaves it unloaded. */
export async function readSnapshot(db: Db, dataDir: string, orgId: string): Promise<SnapshotOutcome> {
  const file = snapshotFile(dataDir, orgId);
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return 'missing';
  }
  const drop = (outcome: SnapshotOutcome) => {
    rmSync(file, { force: true });
    return outcome;
  };
  let header: Header;
  let body: Buffer;
  try {
    const len = buf.readUInt32LE(0);
    header = JSON.parse(buf.subarray(4, 4 + len).toString('utf8')) as Header;
    body = buf.subarray(4 + len);
    if (header.magic !== MAGIC || header.format !== FORMAT || header.orgId !== orgId) return drop('corrupt');
    if (header.arrays.reduce((n, a) => n + a.bytes, 0) !== body.length || crc32(body) !== header.crc)
      return drop('corrupt');
  } catch {
    return drop('corrupt');
  }
  if (header.schema !== (await schemaVersion(db))) return drop('stale');
  const named = await db
    .selectFrom('search_index_state')
    .select('value')
    .where('key', '=', stateKey(orgId))
    .executeTakeFirst();
  if (named?.value !== header.id) return drop('stale');
  const seenRemovals = removalPosition();
  const arrays = new Map<string, Buffer>();
  let at = 0;
  for (const a of header.arrays) {
    // Copied out, so each typed array is aligned and owns its memory.
    arrays.set(a.name, Buffer.from(body.subarray(at, at + a.bytes)));
    at += a.bytes;
  }
  const view = <T>(name: string, Type: new (b: ArrayBuffer, o: number, n: number) => T, size: number): T => {
    const b = arrays.get(name)!;
    return new Type(b.buffer as ArrayBuffer, b.byteOffset, b.byteLength / size);
  };
  const idx = new OrgIndex(orgId, header.capacity);
  idx.state = view('state', Uint8Array, 1);
  idx.created = view('created', Float64Array, 8);
  idx.updated = view('updated', Float64Array, 8);
  idx.tpl1 = view('tpl1', Int32Array, 4);
  idx.facetStart = view('facetStart', Int32Array, 4);
  idx.facetIds = view('facetIds', Int32Array, 4);
  if (idx.state.length !== header.capacity || idx.facetStart.length !== header.capacity + 1) return drop('corrupt');
  for (let d = 0; d < header.capacity; d++) {
    const s = idx.state[d]!;
    if (s !== 0) idx.stateBits[s - 1]![d >>> 5]! |= 1 << (d & 31);
  }
  header.tplIds.forEach((id, i) => {
    idx.tplIds.set(id, i);
  });
  header.dict.forEach((e, i) => {
    idx.dict.push(e);
    idx.dictIds.set(`${e.facetKey}\u0000${e.valueKey}`, i);
  });
  const moreDocs = view('moreDocs', Int32Array, 4);
  const moreStart = view('moreStart', Int32Array, 4);
  const moreIds = view('moreIds', Int32Array, 4);
  for (let i = 0; i < moreDocs.length; i++)
    idx.tplMore.set(moreDocs[i]!, moreIds.slice(moreStart[i]!, moreStart[i + 1]!));
  header.terms.forEach((key, i) => {
    idx.cacheTerm(key, view(`term${i}`, Uint32Array, 4));
  });
  // Every document the database indexed up to the snapshot's time must be in it; documents it
  // holds that the database no longer has were removed since.
  const { rows } = await sql<{ docs: string | null }>`
    select group_concat(doc_no || ':' || (indexed_at <= ${header.seenIndexedAt})) as docs
    from search_docs where org_id = ${orgId}`.execute(db);
  const present = new Uint8Array(header.capacity);
  let doc = -1;
  let stale = false;
  for (const part of (rows[0]?.docs ?? '').split(',')) {
    if (part === '') continue;
    const colon = part.indexOf(':');
    doc = Number(part.slice(0, colon));
    const old = part.charCodeAt(colon + 1) === 49;
    if (doc < header.capacity) present[doc] = 1;
    if (old && (doc >= header.capacity || idx.state[doc] === 0)) stale = true;
  }
  if (stale) return drop('stale');
  for (let d = 0; d < header.capacity; d++) if (idx.state[d] !== 0 && present[d] === 0) idx.removeDoc(d);
  idx.seenIndexedAt = header.seenIndexedAt;
  idx.settled = true;
  idx.seenRemovals = seenRemovals;
  return installIndex(db, idx) ? 'loaded' : 'missing';
}
