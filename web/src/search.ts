import { api } from './api.ts';

export interface AssetRecord {
  objectId: string;
  fileId: string;
  filename?: string;
  createdEpoch: number;
  lastUpdatedEpoch: number;
  renditionsState?: string | null;
  contentType?: string;
  fileSizeInBytes?: number;
  metadataTemplateId?: string;
  versionNumber?: number;
  /** Painted before the thumbnail loads (the renditions job sets it for every asset with a picture). */
  placeholder?: { thumbhash: string; dominantColor: string };
}

/**
 * How long a search answer takes to reach the screen (issue 26: painted within 100 ms of the API's
 * answer): a mark when a new query's first page arrives, and a measure `tessera:search-paint` after
 * the frame that shows it (requestAnimationFrame runs before that frame's paint, the task queued
 * from it after). Read with performance.getEntriesByName('tessera:search-paint'); nothing is sent.
 */
function markAnswer(): void {
  const start = performance.now();
  requestAnimationFrame(() =>
    setTimeout(() => {
      try {
        performance.measure('tessera:search-paint', { start, end: performance.now() });
      } catch {
        // A browser without User Timing Level 3: no figure, nothing else changes.
      }
    }, 0),
  );
}

export interface Facet {
  facet_name: string;
  values: { key: string; doc_count: number }[];
}

export interface Query {
  text: string;
  facets: Record<string, string>;
  from?: string;
  to?: string;
  sort: 'lastUpdatedEpoch' | 'createdEpoch' | 'filename' | 'relevance';
  order: 'asc' | 'desc';
}

export const EMPTY_QUERY: Query = { text: '', facets: {}, sort: 'lastUpdatedEpoch', order: 'desc' };

/** Words, "phrases" and prefixes; the word being typed becomes a prefix so results follow the typing. */
export function searchTerms(text: string): string[] {
  const tokens = text.match(/"[^"]*"?|[^\s"]+/g) ?? [];
  const terms = tokens
    .map((t) => (t.startsWith('"') && !t.endsWith('"') ? `${t}"` : t))
    .filter((t) => t.replace(/["*]/g, '').trim() !== '');
  const last = terms.at(-1);
  if (last && !/\s$/.test(text) && /[\p{L}\p{N}]$/u.test(last) && !last.startsWith('"'))
    terms[terms.length - 1] = `${last}*`;
  return terms;
}

export function searchBody(query: Query): Record<string, unknown> {
  const terms = [
    ...searchTerms(query.text),
    ...Object.entries(query.facets).map(([name, value]) => `${name}: ${value}`),
  ];
  const body: Record<string, unknown> = { searchTerm: terms.length > 0 ? terms : ['*'], operation: 'AND' };
  body.sortBy = [{ metadataDefinitionSearchField: query.sort, order: query.order }];
  const range: Record<string, unknown> = { field: 'createdEpoch' };
  if (query.from) range.from = query.from;
  if (query.to) range.to = query.to;
  if (query.from || query.to) body.dateRanges = [range];
  return body;
}

export const PAGE = 100;
const FROM_LIMIT = 10_000;
/** Results per scan call, and how far ahead of the current scan run a page starts a run of its own. */
const SCAN_STEP = 1000;
const SCAN_JUMP = 5000;
const EXCLUDES = [
  'technicalMetadata',
  'securityDenormalized',
  'metadata',
  'metadataDenormalized',
  'renditions',
  'securityTemplateIds',
];

interface KeywordAnswer {
  totalCount: number;
  result: AssetRecord[];
  facets: Facet[];
}

/**
 * The pages of one query, loaded as they scroll into view. Pages up to the API's 10,000-result
 * window come from the keyword search (`from`); past it, from a scan in the same order: a run
 * starts at the first page wanted past the window (the scan's `from`) and its cursor is followed
 * while the pages wanted are near it (each call fills ten pages); a page far from it starts a new run.
 */
export class ResultSet {
  readonly query: Query;
  total = -1;
  facets: Facet[] = [];
  private readonly pages = new Map<number, AssetRecord[]>();
  private readonly loading = new Map<number, Promise<void>>();
  private scanCursor: string | null | undefined;
  private scanNext = 0;
  /** Where the current scan run began (its first call's `from`). */
  private runStart = -1;
  private scanning: Promise<void> | null = null;
  private readonly onChange: () => void;
  private readonly abort = new AbortController();

  constructor(query: Query, onChange: () => void) {
    this.query = query;
    this.onChange = onChange;
  }

  close(): void {
    this.abort.abort();
  }

  item(index: number): AssetRecord | undefined {
    return this.pages.get(Math.floor(index / PAGE))?.[index % PAGE];
  }

  loaded(): AssetRecord[] {
    return [...this.pages.keys()].sort((a, b) => a - b).flatMap((p) => this.pages.get(p)!);
  }

  /** Loads the first page (with the facets and the total). */
  async start(): Promise<void> {
    await this.ensure(0, true);
  }

  ensure(page: number, withFacets = false): Promise<void> {
    if (this.pages.has(page)) return Promise.resolve();
    const existing = this.loading.get(page);
    if (existing) return existing;
    const job = (page * PAGE < FROM_LIMIT ? this.fetchWindow(page, withFacets) : this.fetchScan(page)).finally(() =>
      this.loading.delete(page),
    );
    this.loading.set(page, job);
    return job;
  }

  /** Refetches loaded pages (thumbnails that were still being made). */
  async reload(page: number): Promise<void> {
    if (page * PAGE >= FROM_LIMIT) return;
    this.pages.delete(page);
    await this.ensure(page);
  }

  private async fetchWindow(page: number, withFacets: boolean): Promise<void> {
    const answer = await api<KeywordAnswer>(
      'POST',
      '/v1/search/keyword',
      {
        ...searchBody(this.query),
        from: page * PAGE,
        limit: PAGE,
        excludes: EXCLUDES,
        aggregations: withFacets,
      },
      this.abort.signal,
    );
    this.total = answer.totalCount;
    if (withFacets) this.facets = answer.facets;
    this.pages.set(page, answer.result);
    if (withFacets) markAnswer();
    this.onChange();
  }

  private async fetchScan(page: number): Promise<void> {
    const target = page * PAGE;
    while (!this.pages.has(page)) {
      if (this.scanning) {
        await this.scanning;
        continue;
      }
      // A page the current run has not reached soon (or passed before it began) starts a run of its
      // own there (`from`), so the end of 100,000 results is one call away, not ninety.
      const fresh =
        this.scanCursor === undefined ||
        this.scanCursor === null ||
        target < this.runStart ||
        target >= this.scanNext + SCAN_JUMP;
      if (fresh && this.runStart === target && this.scanCursor === null) return; // nothing there
      this.scanning = this.scanStep(fresh ? target : undefined).finally(() => {
        this.scanning = null;
      });
      await this.scanning;
    }
  }

  private async scanStep(from?: number): Promise<void> {
    const body: Record<string, unknown> = { ...searchBody(this.query), limit: SCAN_STEP };
    if (this.query.sort === 'relevance') delete body.sortBy;
    if (from !== undefined) {
      body.from = from;
      this.runStart = from;
      this.scanNext = from;
    } else body.cursor = this.scanCursor;
    const answer = await api<{ cursor: string | null; result: AssetRecord[] }>(
      'POST',
      '/v1/asset/scan',
      body,
      this.abort.signal,
    );
    const start = this.scanNext;
    answer.result.forEach((record, i) => {
      const index = start + i;
      const p = Math.floor(index / PAGE);
      // The window's pages came from the keyword search: the scan only fills what lies past it.
      if (index >= FROM_LIMIT) {
        const list = this.pages.get(p) ?? [];
        list[index % PAGE] = record;
        this.pages.set(p, list);
      }
    });
    this.scanNext += answer.result.length;
    this.scanCursor = answer.cursor;
    this.onChange();
  }
}

/** Signed thumbnail URLs (POST /v1/asset/rendition-urls), remembered until shortly before they expire. */
const thumbs = new Map<string, { url: string | null; until: number; key: string }>();

export function thumbFor(record: AssetRecord): string | null | undefined {
  const entry = thumbs.get(record.objectId);
  if (!entry || entry.until < Date.now() || entry.key !== `${record.lastUpdatedEpoch}:${record.renditionsState}`)
    return undefined;
  return entry.url;
}

export async function loadThumbs(records: AssetRecord[], rendition = 'imageThumb'): Promise<void> {
  const missing = records.filter((r) => r && thumbFor(r) === undefined && r.renditionsState !== 'pending');
  for (let i = 0; i < missing.length; i += 200) {
    const chunk = missing.slice(i, i + 200);
    const answer = await api<{ expires: number; urls: Record<string, Record<string, string>> }>(
      'POST',
      '/v1/asset/rendition-urls',
      { ids: chunk.map((r) => r.objectId), renditions: [rendition] },
    );
    for (const record of chunk) {
      thumbs.set(record.objectId, {
        url: answer.urls[record.objectId]?.[rendition] ?? null,
        until: answer.expires - 5 * 60_000,
        key: `${record.lastUpdatedEpoch}:${record.renditionsState}`,
      });
    }
  }
}
