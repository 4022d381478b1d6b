/**
 * The web app's build (docs/web-client.md): web/ → dist/web, served by Tern at /app
 * (src/web/app.ts). Hashed file names under /app/assets/ (cached for a year), one module
 * script and one stylesheet in index.html (no inline script: the CSP allows none).
 */
import path from 'node:path'
import { defineConfig } from 'vite'

const here = import.meta.dirname

export default defineConfig({
  root: here,
  base: '/app/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: {
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat' },
  },
  build: {
    outDir: path.resolve(here, '../dist/web'),
    emptyOutDir: true,
    assetsDir: 'assets',
    // the polyfill would be a script in index.html; every browser the app targets has modulepreload
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
    chunkSizeWarningLimit: 200,
  },
  server: {
    // npm run dev:web: the app on Vite's server, the API and the gateway on a running Tern
    proxy: {
      '^/(api|api\\.v2|files|uploads|login|register|logout|join|avatars|stickers)': {
        target: process.env.TERN_URL ?? 'http://127.0.0.1:3000',
        ws: true,
        changeOrigin: false,
      },
    },
  },
})
