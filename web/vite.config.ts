import { defineConfig } from 'vite';

// The app is served by Tessera itself at /app/ (src/features/web-app). Built by `npm ci` (the root
// `prepare` script) into web/dist; nothing here is needed at run time.
export default defineConfig({
  root: import.meta.dirname,
  base: '/app/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline assets: the Content-Security-Policy allows only our own files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    chunkSizeWarningLimit: 200,
  },
});
