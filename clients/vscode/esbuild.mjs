// Bundles the extension (Node, CommonJS, `vscode` external: a small entry point and the rest,
// loaded on first use) and the chat webview (browser),
// and copies the webview's static assets next to them. `--watch` rebuilds on change.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = { bundle: true, minify: production, sourcemap: !production, logLevel: 'info', target: 'es2022' };
// The entry point VS Code loads at activation is small; everything else (the language client
// above all) is in tether.js, which it loads on first use.
const builds = [
  { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', external: ['vscode', './tether.js'] },
  { ...common, entryPoints: ['src/tether.ts'], outfile: 'dist/tether.js', platform: 'node', format: 'cjs', external: ['vscode'] },
  { ...common, entryPoints: ['src/webview/main.ts'], outfile: 'dist/webview.js', platform: 'browser', format: 'iife' },
];

// A fresh folder: no stale source maps of a development build end up in the package.
rmSync('dist', { recursive: true, force: true });
mkdirSync('dist', { recursive: true });
copyFileSync('media/chat.css', 'dist/chat.css');
copyFileSync('node_modules/@vscode/codicons/dist/codicon.css', 'dist/codicon.css');
copyFileSync('node_modules/@vscode/codicons/dist/codicon.ttf', 'dist/codicon.ttf');

if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
