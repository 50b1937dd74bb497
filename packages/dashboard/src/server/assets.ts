import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ZoottError } from '@zoott/core';

export interface Assets {
  js: Buffer;
  css: Buffer;
  /** Content hash, appended to asset URLs so a new build is never served from cache. */
  version: string;
}

/**
 * Built bundle locations: next to the built server (`dist/index.js` -> `dist/public`), or the
 * package's dist when the server runs from source (tests import `src/`).
 */
function candidates(): string[] {
  return [
    fileURLToPath(new URL('./public/', import.meta.url)),
    fileURLToPath(new URL('../../dist/public/', import.meta.url)),
  ];
}

/** Reads the browser bundle once at start-up; nothing is fetched from anywhere at run time. */
export function loadAssets(dir?: string): Assets {
  const dirs = dir ? [dir] : candidates();
  const found = dirs.find((d) => existsSync(join(d, 'app.js')) && existsSync(join(d, 'app.css')));
  if (!found)
    throw new ZoottError(
      'INVALID_CONFIG',
      `dashboard assets (app.js, app.css) not found in ${dirs.join(' or ')}; build them with pnpm --filter @zoott/dashboard build`,
      { field: 'assetsDir' },
    );
  const js = readFileSync(join(found, 'app.js'));
  const css = readFileSync(join(found, 'app.css'));
  const version = createHash('sha256').update(js).update(css).digest('hex').slice(0, 12);
  return { js, css, version };
}

const escapeAttr = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** Page settings the app reads from <meta> tags. */
export interface PageConfig {
  token: string | null;
  readOnly: boolean;
  world: string | null;
  version: string;
}

/** The single HTML page. The token is echoed only to a request that already carried it. */
export function pageHtml(cfg: PageConfig): string {
  const query = `v=${cfg.version}${cfg.token ? `&token=${encodeURIComponent(cfg.token)}` : ''}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="zoott-token" content="${escapeAttr(cfg.token ?? '')}">
<meta name="zoott-read-only" content="${cfg.readOnly ? 'true' : 'false'}">
<meta name="zoott-world" content="${escapeAttr(cfg.world ?? '')}">
<title>zoott dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css?${escapeAttr(query)}">
<script src="/assets/app.js?${escapeAttr(query)}" defer></script>
</head>
<body>
<noscript>The zoott dashboard needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;
}
