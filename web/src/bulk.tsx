import { useEffect } from 'preact/hooks';

export function BulkEdit({ onClose }: { ids: string[]; onClose: (changed: boolean) => void }) {
  useEffect(() => onClose(false), []);
  return null;
}
