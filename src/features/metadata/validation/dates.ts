import type { DateFormat } from './model.ts';

const PATTERNS = new Map<string, { re: RegExp; order: ('y' | 'm' | 'd')[] }>();

function patternFor(format: string) {
  let cached = PATTERNS.get(format);
  if (!cached) {
    const order: ('y' | 'm' | 'd')[] = [];
    const source = format.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&').replace(/yyyy|MM|dd/g, (token) => {
      order.push(token === 'yyyy' ? 'y' : token === 'MM' ? 'm' : 'd');
      return token === 'yyyy' ? '(\\d{4})' : '(\\d{1,2})';
    });
    cached = { re: new RegExp(`^${source}$`), order };
    PATTERNS.set(format, cached);
  }
  return cached;
}

function daysIn(year: number, month: number): number {
  return month === 2
    ? (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;
}

function iso(y: number, m: number, d: number): string | undefined {
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m)) return undefined;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A calendar date as `yyyy-MM-dd`, from text in the attribute's declared format or in ISO 8601
 * (a date-time keeps its date part). Undefined when the text is not a real date.
 */
export function parseDate(text: string, format: DateFormat | undefined): string | undefined {
  const trimmed = text.trim();
  if (format) {
    const { re, order } = patternFor(format);
    const m = re.exec(trimmed);
    if (m) {
      const parts = { y: 0, m: 0, d: 0 };
      order.forEach((k, i) => {
        parts[k] = Number(m[i + 1]);
      });
      return iso(parts.y, parts.m, parts.d);
    }
  }
  const m = ISO_DATE.exec(trimmed);
  return m ? iso(Number(m[1]), Number(m[2]), Number(m[3])) : undefined;
}

/** Formats a stored `yyyy-MM-dd` date in a declared format. */
export function formatDate(isoDate: string, format: DateFormat | undefined): string {
  if (!format || format === 'yyyy-MM-dd') return isoDate;
  const [y, m, d] = isoDate.split('-');
  return format.replace('yyyy', y!).replace('MM', m!).replace('dd', d!);
}
