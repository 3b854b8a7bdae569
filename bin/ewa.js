#!/usr/bin/env node
// `npx ewa …` runs here with the project's Node 24 (node_modules/.bin comes first on npx's PATH). An older Node (before
// `npm install` put Node 24 there, or a `node bin/ewa.js` with the machine's own) cannot read the TypeScript it imports:
// say so in one line rather than with ERR_UNKNOWN_FILE_EXTENSION.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `ewa: needs Node.js 24 or later, and this is ${process.version}. Run \`npm install\` in the project (it puts ` +
      'Node.js 24 in node_modules/.bin), then `npx ewa …` or `npm run ewa -- …`.\n',
  );
  process.exit(1);
}
await import('../src/main.ts');
