import { tmpdir } from 'node:os';

/**
 * The text of an error as it may be stored in a record a caller can read (an asset's
 * `renditionError`, an Action's errors, a job's or a mail's last error): no server paths. sharp,
 * libvips, fs and the S3 client name the temporary or data file they failed on
 * (`Input file /tmp/tessera-rend-Xy12/source is missing`); that path says where the server keeps
 * its files and who runs it. Every absolute path (POSIX, `file://`, Windows) becomes `<file>`;
 * the rest of the message, which says what went wrong, stays. At most `max` characters.
 */
export function recordedError(error: unknown, max = 2000): string {
  const text = error instanceof Error ? error.message : typeof error === 'string' ? error : String(error);
  return stripPaths(text).slice(0, max);
}

const TMP = tmpdir();

export function stripPaths(text: string): string {
  return text
    .split(TMP)
    .join('<tmp>')
    .replace(/file:\/\/\/?[^\s'"`)\]},;]+/g, '<file>')
    .replace(/(^|[\s'"`(=[:,])[A-Za-z]:\\[^\s'"`)\]},;]*/g, '$1<file>')
    .replace(/(^|[\s'"`(=[:,])(?:<tmp>)?\/(?:[^\s'"`)\]},;/]+\/)*[^\s'"`)\]},;/]*/g, (m, lead: string) =>
      m.length - lead.length > 1 ? `${lead}<file>` : m,
    )
    .replace(/<tmp>[^\s'"`)\]},;]*/g, '<file>');
}
