// Builds the console into console/dist, served by `atrium serve` at /console (src/platform/http/console.ts).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    reportCompressedSize: false,
    // The budget that matters is gzipped JavaScript for the first page, measured by the browser test.
    chunkSizeWarningLimit: 1000,
  },
});
