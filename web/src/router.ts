import { useEffect, useState } from 'preact/hooks';

/** The app's pages live under /app/; the server answers every such path with the app. */
export type Route =
  | { page: 'library' }
  | { page: 'asset'; id: string }
  | { page: 'collections' }
  | { page: 'collection'; id: string }
  | { page: 'templates' }
  | { page: 'template'; id: string }
  | { page: 'boards' }
  | { page: 'board'; id: string }
  | { page: 'admin'; section: string; id?: string }
  | { page: 'callback' }
  | { page: 'set-password' }
  | { page: 'sessions' };

export function parseRoute(path: string): Route {
  const rest = path.replace(/^\/app\/?/, '');
  const [first, second] = rest.split('/');
  if (first === 'callback') return { page: 'callback' };
  if (first === 'set-password') return { page: 'set-password' };
  if (first === 'sessions') return { page: 'sessions' };
  if (first === 'asset' && second) return { page: 'asset', id: decodeURIComponent(second) };
  if (first === 'collections' && second) return { page: 'collection', id: decodeURIComponent(second) };
  if (first === 'collections') return { page: 'collections' };
  if (first === 'templates' && second) return { page: 'template', id: decodeURIComponent(second) };
  if (first === 'templates') return { page: 'templates' };
  if (first === 'boards' && second) return { page: 'board', id: decodeURIComponent(second) };
  if (first === 'boards') return { page: 'boards' };
  if (first === 'admin')
    return {
      page: 'admin',
      section: second || '',
      id: rest.split('/')[2] ? decodeURIComponent(rest.split('/')[2]!) : undefined,
    };
  return { page: 'library' };
}

const listeners = new Set<() => void>();

export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const l of listeners) l();
}

addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return route;
}

/** An in-app link: a real <a href> (keyboard, middle click, copy link) that navigates without a reload. */
export function linkClick(event: MouseEvent, path: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(path);
}
