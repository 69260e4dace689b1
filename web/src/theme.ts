/** Light or dark: the system's choice until the person picks one, remembered on this device. */
const KEY = 'tessera.theme';
export type Theme = 'light' | 'dark';

export function currentTheme(): Theme {
  const stored = localStorage.getItem(KEY);
  if (stored === 'light' || stored === 'dark') return stored;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(theme: Theme, remember = false): void {
  document.documentElement.dataset.theme = theme;
  if (remember) localStorage.setItem(KEY, theme);
}
