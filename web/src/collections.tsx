export function Collections() {
  return null;
}
export function CollectionPage(_: { id: string }) {
  return null;
}
export function AddToCollection(_: { ids: string[]; onDone: (message: string) => void }) {
  return null;
}
