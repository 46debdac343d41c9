import react from '@vitejs/plugin-react';
import { defineConfig, type ProxyOptions } from 'vite';

// Where `npm run dev` and `npm run preview` send API calls and the edits
// channel (baton serves the built app itself; the proxy is for development).
const target = process.env.BATON_PROXY_TARGET ?? 'http://127.0.0.1:8080';
const api: ProxyOptions = { target, changeOrigin: false };
const proxy: Record<string, ProxyOptions> = Object.fromEntries(
  ['/auth', '/me', '/schema', '/users', '/pages', '/cards', '/edgenotes', '/locks', '/waiters', '/admin', '/memberships', '/healthz', '/openapi.json', '/docs'].map(
    (path) => [path, api],
  ),
);
// `/cases/…` is an API path (the app routes with `#/…`), with the edits WebSocket below it
proxy['/cases'] = { target, ws: true, changeOrigin: false };

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
