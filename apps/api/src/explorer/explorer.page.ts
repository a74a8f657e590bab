/**
 * The explorer page (`GET /graphiql`): GraphiQL with a field for the API key. The key stays in the
 * browser (localStorage) and goes only to this origin's `/graphql`, as `Authorization: Bearer`.
 * Everything the page loads is served by the API itself (explorer.assets.ts); the
 * Content-Security-Policy below forbids any other origin.
 */

/**
 * - default-src 'self', and script-src 'self' without 'unsafe-inline' or 'unsafe-eval': the page
 *   runs only the four scripts the API serves (this page's own script is a file, not inline).
 * - style-src 'self', but style-src-elem also 'unsafe-inline': GraphiQL's dialogs (settings, short
 *   keys) are Radix dialogs, whose scroll lock adds a <style> element when one opens; its text holds
 *   the scrollbar's width, so no hash fits every browser, and a bundle we do not build cannot carry
 *   a nonce. Only <style> elements are let through, not style="" attributes, and CSS cannot run
 *   code or reach another origin (img-src, font-src and connect-src still say 'self').
 * - img-src and font-src data:: GraphiQL's stylesheet embeds its fonts and icons as data: URLs.
 * - connect-src 'self': /graphql and the schema, on this origin only.
 * - object-src, base-uri, form-action, frame-ancestors 'none': nothing to embed, no form posts, and
 *   the page cannot be framed (clickjacking) by another site.
 */
export const EXPLORER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "style-src-elem 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Where the page keeps the pasted key (localStorage of this origin only). */
export const API_KEY_STORAGE_KEY = 'spanforge.explorer.apiKey';

export interface PageAssets {
  react: string;
  reactDom: string;
  graphiql: string;
  graphiqlCss: string;
  explorer: string;
  explorerCss: string;
}

/** Asset paths are relative (`graphiql/assets/…`), so the page also works behind a proxy that adds a path prefix. */
export function explorerPage(assets: PageAssets): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>spanforge GraphQL explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets.graphiqlCss}">
<link rel="stylesheet" href="${assets.explorerCss}">
</head>
<body>
<header class="sf-bar">
<span class="sf-title">spanforge GraphQL explorer</span>
<label for="sf-key">API key</label>
<input id="sf-key" type="password" autocomplete="off" spellcheck="false" placeholder="a project API key (sf_…) or the admin token">
<button id="sf-forget" type="button">Forget key</button>
<span class="sf-note">Kept in this browser only (localStorage), sent only to this server's /graphql.</span>
</header>
<main id="graphiql"><noscript>The explorer needs JavaScript.</noscript></main>
<script src="${assets.react}"></script>
<script src="${assets.reactDom}"></script>
<script src="${assets.graphiql}"></script>
<script src="${assets.explorer}"></script>
</body>
</html>
`;
}

export const EXPLORER_CSS = `html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; }
.sf-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; padding: 8px 12px; border-bottom: 1px solid #d0d7de;
  background: #f6f8fa; color: #1f2328; font-size: 14px; }
.sf-title { font-weight: 600; margin-right: 12px; }
.sf-bar input { flex: 0 1 34em; min-width: 12em; padding: 4px 8px; font: 13px ui-monospace, SFMono-Regular, Menlo, monospace;
  border: 1px solid #d0d7de; border-radius: 6px; }
.sf-bar button { padding: 4px 10px; border: 1px solid #d0d7de; border-radius: 6px; background: #fff; cursor: pointer; }
.sf-note { color: #59636e; font-size: 12px; }
#graphiql { flex: 1; min-height: 0; }
`;

/**
 * The page's script, served as a file (the CSP allows no inline script). Plain ES2020 for the
 * browser, no build step: GraphiQL and React are the globals their UMD bundles define.
 */
export const EXPLORER_SCRIPT = `(function () {
  'use strict';
  var STORAGE_KEY = ${JSON.stringify(API_KEY_STORAGE_KEY)};
  // Relative to the page (/graphiql): this origin's /graphql, also behind a path prefix.
  var GRAPHQL_URL = new URL('graphql', document.baseURI).href;
  var SCHEMA_URL = new URL('graphiql/schema.json', document.baseURI).href;
  var DEFAULT_QUERY = [
    '# Paste an API key in the field above,',
    '# then press the run button (Ctrl-Enter).',
    '# Docs (the book icon, left) describes',
    '# every query, type and field.',
    '',
    '{',
    '  currentProject {',
    '    id',
    '    name',
    '  }',
    '}',
    '',
  ].join('\\n');

  var input = document.getElementById('sf-key');
  var forget = document.getElementById('sf-forget');
  var root = ReactDOM.createRoot(document.getElementById('graphiql'));

  function readKey() {
    try {
      return localStorage.getItem(STORAGE_KEY) || '';
    } catch (e) {
      return '';
    }
  }
  function keepKey(key) {
    try {
      if (key) localStorage.setItem(STORAGE_KEY, key);
      else localStorage.removeItem(STORAGE_KEY);
    } catch (e) {
      // Storage disabled: the key lasts as long as the page.
    }
  }

  function headers(key) {
    var h = { accept: 'application/json', 'content-type': 'application/json' };
    if (key) h.authorization = 'Bearer ' + key;
    return h;
  }

  // REST refusals ({ error: { code, message } }) shown the way GraphiQL shows GraphQL errors.
  function answer(response) {
    return response.json().then(function (body) {
      if (body && body.error && !body.errors) return { errors: [{ message: body.error.message, extensions: { code: body.error.code } }] };
      return body;
    });
  }

  var NO_KEY = { errors: [{ message: 'Paste a project API key (sf_…) or the admin token in the field above.' }] };

  // GraphiQL asks for the schema with the standard introspection query, which is deeper than the
  // API's query limits allow: the API serves the same introspection result at graphiql/schema.json.
  function fetcherFor(key) {
    return function (params) {
      // Without a key every request would be refused: say what to do instead of asking.
      if (!key) return Promise.resolve(NO_KEY);
      if (params && params.operationName === 'IntrospectionQuery') {
        return fetch(SCHEMA_URL, { headers: headers(key), credentials: 'omit', cache: 'no-store' }).then(answer);
      }
      return fetch(GRAPHQL_URL, { method: 'POST', headers: headers(key), body: JSON.stringify(params), credentials: 'omit' }).then(answer);
    };
  }

  function render(key) {
    root.render(
      React.createElement(GraphiQL, {
        fetcher: fetcherFor(key),
        defaultQuery: DEFAULT_QUERY,
        isHeadersEditorEnabled: false,
        shouldPersistHeaders: false,
      }),
    );
  }

  var pending;
  input.value = readKey();
  input.addEventListener('input', function () {
    var key = input.value.trim();
    keepKey(key);
    // A new key reloads the schema: once the typing or pasting stops.
    clearTimeout(pending);
    pending = setTimeout(function () {
      render(key);
    }, 300);
  });
  forget.addEventListener('click', function () {
    input.value = '';
    keepKey('');
    clearTimeout(pending);
    render('');
  });
  render(input.value.trim());
})();
`;
