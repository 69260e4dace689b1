/**
 * `Content-Disposition` for a file of any name (RFC 6266 with RFC 8187's `filename*`): an ASCII
 * `filename="…"` for old clients, and `filename*=UTF-8''…` with the exact name for every client
 * that reads it (all current browsers, curl -J, wget). A header value may hold only Latin-1, and a
 * name such as `Отчёт.pdf`, `写真.jpg` or an emoji written into it raw was a 500 on every download.
 * Every route that names a download uses this one function.
 */
export function contentDisposition(filename: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const name = filename.normalize('NFC');
  return `${type}; filename="${asciiFallback(name)}"; filename*=UTF-8''${encodeRfc8187(name)}`;
}

/**
 * The name in printable ASCII: accents dropped (`é` → `e`), anything else outside printable ASCII,
 * quotes, backslashes and path separators as `_`; the extension kept so the fallback still opens.
 */
export function asciiFallback(name: string): string {
  const plain = name.normalize('NFKD').replace(/\p{M}+/gu, '');
  let out = '';
  for (const ch of plain) out += /^[\x20-\x7e]$/.test(ch) && !'"\\/%;'.includes(ch) ? ch : '_';
  out = out.trim().slice(-200);
  return out === '' || /^[_.\s]*$/.test(out.replace(/\.[A-Za-z0-9]{1,8}$/, ''))
    ? `download${/\.[A-Za-z0-9]{1,8}$/.exec(out)?.[0] ?? ''}`
    : out;
}

/** RFC 8187 `value-chars`: UTF-8 bytes percent-encoded except the attr-chars. */
function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
