/**
 * The panel's stylesheet and its one script, served from this origin (/admin/assets/*) so the
 * pages' CSP can say `script-src 'self'` and `style-src 'self'` with nothing inline. They are kept
 * here as text, not as files beside the code, because the build (tsc) copies only .ts output.
 */

export const ADMIN_CSS = `
:root { --fg: #1d2733; --muted: #5f6b78; --line: #dbe2ea; --bg: #f6f8fa; --accent: #1f6fc5; --danger: #b42318; --ok: #1a7f37; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #fff; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.25rem; padding: .75rem 1rem; background: var(--bg); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
.nav ul { display: flex; flex-wrap: wrap; gap: .25rem .9rem; margin: 0; padding: 0; list-style: none; }
.nav a { text-decoration: none; padding: .2rem 0; }
.nav a[aria-current="page"] { font-weight: 600; border-bottom: 2px solid var(--accent); }
.who { margin-left: auto; color: var(--muted); font-size: .9rem; }
main { max-width: 68rem; margin: 0 auto; padding: 1rem; }
main:focus { outline: none; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
.muted { color: var(--muted); }
.notice { padding: .6rem .8rem; border-left: 4px solid var(--ok); background: #eef8f0; }
.error { padding: .6rem .8rem; border-left: 4px solid var(--danger); background: #fdf0ef; }
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
td.wrap { white-space: normal; min-width: 16rem; overflow-wrap: anywhere; }
th { background: var(--bg); white-space: nowrap; }
tbody tr:last-child td { border-bottom: 0; }
td.actions { white-space: nowrap; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: 4px; font-size: .8rem; background: var(--bg); border: 1px solid var(--line); }
.badge.banned { color: var(--danger); border-color: currentColor; }
.badge.admin { color: var(--accent); border-color: currentColor; }
form.stack { display: grid; gap: .75rem; max-width: 28rem; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: 1rem; }
form.inline { display: inline; }
label { display: grid; gap: .2rem; font-weight: 500; }
label.check { display: flex; gap: .4rem; align-items: center; font-weight: 400; }
input, select, textarea, button { font: inherit; }
input[type="text"], input[type="search"], input[type="password"], input[type="number"], input[type="date"], select, textarea {
  padding: .45rem .55rem; border: 1px solid #9aa6b2; border-radius: 5px; background: #fff; color: inherit; min-width: 0; width: 100%; }
textarea { min-height: 6rem; resize: vertical; }
button { padding: .45rem .9rem; border: 1px solid var(--accent); border-radius: 5px; background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
button.link { background: none; border: 0; padding: 0; color: var(--accent); text-decoration: underline; }
fieldset { border: 1px solid var(--line); border-radius: 6px; padding: .75rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .75rem; margin: 0 0 1rem; padding: 0; list-style: none; }
.cards li { border: 1px solid var(--line); border-radius: 6px; padding: .75rem; }
.cards .value { display: block; font-size: 1.5rem; font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.pager { display: flex; gap: 1rem; align-items: center; margin: 1rem 0; }
.report { border: 1px solid var(--line); border-radius: 6px; padding: .75rem; margin-bottom: .75rem; }
ul.tabs { display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: 0 0 .75rem; padding: 0; list-style: none; }
ul.tabs a[aria-current] { font-weight: 600; color: var(--fg); }
.good { color: var(--ok); }
.bad { color: var(--danger); }
.report h2 { margin-top: 0; }
.report blockquote, blockquote.message { margin: .5rem 0; padding: .4rem .7rem; border-left: 3px solid var(--line); background: var(--bg); white-space: pre-wrap; overflow-wrap: anywhere; }
.report form { margin-top: .5rem; }
.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
.row label { flex: 1 1 12rem; }
progress { width: 100%; height: 1.25rem; }
.chart { width: 100%; height: auto; max-width: 48rem; display: block; }
.chart text { fill: var(--muted); }
.chart-line { stroke: var(--accent); }
.chart-area { fill: var(--accent); }
.chart-points circle { fill: var(--accent); }
figure { margin: 0 0 1.5rem; }
figcaption { font-weight: 600; margin-bottom: .25rem; }
details { margin-top: .25rem; }
@media (max-width: 40rem) {
  .who { margin-left: 0; width: 100%; }
  h1 { font-size: 1.35rem; }
  main { padding: .75rem; }
  /* the chart is drawn 640 units wide and shrinks with the screen: larger text keeps it legible */
  .chart text { font-size: 22px; }
}
`

/** Confirmation before destructive forms, and the broadcast page's live progress. */
export const ADMIN_JS = `'use strict'
for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    if (!window.confirm(form.dataset.confirm)) event.preventDefault()
  })
}

const live = document.querySelector('[data-progress-url]')
if (live) {
  const bar = live.querySelector('progress')
  const field = (name) => document.querySelector('[data-field="' + name + '"]')
  const shortTime = (iso) => iso.slice(0, 10) + ' ' + iso.slice(11, 16)
  const show = (state) => {
    bar.max = Math.max(state.total, 1)
    bar.value = state.sent
    field('sent').textContent = String(state.sent)
    field('total').textContent = String(state.total)
    field('status').textContent = state.status
    if (state.started_at) field('started').textContent = shortTime(state.started_at)
    if (state.finished_at) field('finished').textContent = shortTime(state.finished_at)
    live.dataset.status = state.status
  }
  const poll = async () => {
    try {
      const res = await fetch(live.dataset.progressUrl, { headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' })
      if (!res.ok) throw new Error('HTTP ' + res.status)
      const state = await res.json()
      show(state)
      if (state.status !== 'done') setTimeout(poll, 1000)
    } catch (error) {
      field('status').textContent = 'progress unavailable (' + error.message + '); reload the page'
    }
  }
  if (live.dataset.status !== 'done') setTimeout(poll, 500)
}
`
