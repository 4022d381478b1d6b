import { escapeHtml } from '../lib/html.js'

/** The shared page shell of V1 HTML views; `body` must already be escaped HTML. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 3rem auto; padding: 0 1rem; color: #1d2733; }
  h1 { font-size: 2rem; margin-bottom: .25rem; }
  a { color: #2a7bd3; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e3e8ee; }
  code { background: #f2f5f8; padding: .1rem .3rem; border-radius: 4px; }
  .muted { color: #6b7785; }
</style>
</head>
<body>
${body}
</body>
</html>
`
}
