import react from '@vitejs/plugin-react';
import { defineConfig, type ProxyOptions } from 'vite';

// Where `npm run dev` and `npm run preview` send API calls and the edits
// channel (baton serves the built app itself; the proxy is for development).
const target = process.env.BATON_PROXY_TARGET ?? 'http://127.0.0.1:8080';
// Everything but the app itself is baton's: the API (its record routes follow the schema in
// force, `/columns`, `/book_components`, …) and, under `/cases/…`, the edits WebSocket.
const proxy: Record<string, ProxyOptions> = {
  '^/(?!$|\\?|index\\.html$|assets/|@|src/|node_modules/).+': { target, ws: true, changeOrigin: false },
};

export default defineConfig({
  base: '/',
  plugins: [react()],
  resolve: { dedupe: ['react', 'react-dom'] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: { host: '127.0.0.1', proxy },
  preview: { host: '127.0.0.1', proxy },
});
