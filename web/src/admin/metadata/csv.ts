/**
 * A vocabulary's values as CSV: `value,parent` (the parent is the name of a value of the previous
 * level's vocabulary, for cascades; empty for none). RFC 4180 quoting both ways.
 */

export function toCsv(rows: string[][]): string {
  const cell = (c: string) => (/[",\r\n]/.test(c) || /^\s|\s$/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  return rows.map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows.filter((r) => r.some((c) => c.trim() !== ''));
}

/** The CSV's values: the first column, trimmed; the second, the parent's name. A header row `value,parent` is skipped. */
export function valuesFromCsv(text: string): { name: string; parent: string }[] {
  const rows = parseCsv(text.replace(/^\uFEFF/, ''));
  if (rows[0] && rows[0][0]?.trim().toLowerCase() === 'value') rows.shift();
  return rows.map((r) => ({ name: (r[0] ?? '').trim(), parent: (r[1] ?? '').trim() })).filter((v) => v.name);
}
