#!/usr/bin/env node
// `npx ewa …` runs here with the project's Node 24 (node_modules/.bin comes first on npx's PATH).
await import('../src/main.ts');
