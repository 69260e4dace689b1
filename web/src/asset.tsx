import type { UploadQueue } from './upload.ts';
export function AssetPage(_: { id: string; uploads: UploadQueue; onChanged: () => void }) {
  return null;
}
