import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { EXPLORER_CSS, EXPLORER_SCRIPT } from './explorer.page';

/** Where the explorer's files are served from: `GET /graphiql/assets/<name>`. */
export const ASSETS_ROUTE = 'graphiql/assets';

/**
 * The explorer's scripts and styles, each from an npm package installed with the API (no CDN: many
 * deployments have no internet) or from this source. GraphiQL 4 is the newest major that ships a
 * browser-ready bundle (dist/index.umd.js, everything but React inside); GraphiQL 5 ships only ES
 * modules that import Monaco and its CSS, which a browser cannot load without a bundler. The UMD
 * bundle needs React 18's UMD builds (React 19 has none; the bundle uses React 18's internals).
 */
const SOURCES = [
  { role: 'react', name: 'react.production.min.js', from: { package: 'react', file: 'umd/react.production.min.js' } },
  { role: 'reactDom', name: 'react-dom.production.min.js', from: { package: 'react-dom', file: 'umd/react-dom.production.min.js' } },
  { role: 'graphiql', name: 'graphiql.min.js', from: { package: 'graphiql', file: 'dist/index.umd.js' } },
  { role: 'graphiqlCss', name: 'graphiql.min.css', from: { package: 'graphiql', file: 'dist/style.css' } },
  { role: 'explorer', name: 'explorer.js', text: EXPLORER_SCRIPT },
  { role: 'explorerCss', name: 'explorer.css', text: EXPLORER_CSS },
] as const;

export type AssetRole = (typeof SOURCES)[number]['role'];

export interface Asset {
  /** The file name in the URL, with a hash of the content: a new version is a new URL, so each can be cached for a year. */
  file: string;
  contentType: string;
  body: Buffer;
  /** The body gzip-compressed, made on first request. */
  gzipped?: Promise<Buffer>;
}

export interface ExplorerAssets {
  /** By the file name in the URL: the allow-list, nothing else under ASSETS_ROUTE is served. */
  byFile: ReadonlyMap<string, Asset>;
  /** The URL path (relative to the page) of each asset, for the page's tags. */
  href: Record<AssetRole, string>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** A package's own directory, found the way Node finds the package (every one listed exports its package.json). */
function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

/** Reads every asset once (about 1.6 MB) and names it by its content. */
export function loadExplorerAssets(): ExplorerAssets {
  const byFile = new Map<string, Asset>();
  const href = {} as Record<AssetRole, string>;
  for (const source of SOURCES) {
    const body = 'text' in source ? Buffer.from(source.text) : readFileSync(path.join(packageDir(source.from.package), source.from.file));
    const extension = path.extname(source.name);
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
    const file = `${path.basename(source.name, extension)}.${hash}${extension}`;
    byFile.set(file, { file, contentType: CONTENT_TYPES[extension]!, body });
    href[source.role] = `${ASSETS_ROUTE}/${file}`;
  }
  return { byFile, href };
}

const gzipAsync = promisify(gzip);

/** The asset gzip-compressed (the GraphiQL bundle shrinks from 1 MB to about 300 KB), compressed once. */
export function gzipped(asset: Asset): Promise<Buffer> {
  asset.gzipped ??= gzipAsync(asset.body, { level: 9 });
  return asset.gzipped;
}
