export function fileSize(bytes: number | undefined | null): string {
  if (bytes === undefined || bytes === null || !Number.isFinite(bytes)) return '';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[i]}`;
}

export function dateTime(epoch: number | undefined | null): string {
  if (!epoch) return '';
  return new Date(epoch).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function extension(filename: string | undefined): string {
  const m = /\.([A-Za-z0-9]{1,8})$/.exec(filename ?? '');
  return m ? m[1]!.toUpperCase() : '';
}
