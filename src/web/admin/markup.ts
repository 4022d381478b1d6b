/**
 * The admin panel's HTML is written with the `html` tag: every interpolated value is escaped
 * unless it is already markup (a `Markup` made by `html` itself or by `trusted`), so a page cannot
 * forget to escape a username, a note or a message.
 */
import { escapeHtml } from '../../lib/html.js'

export class Markup {
  constructor(readonly text: string) {}
  toString() {
    return this.text
  }
}

type Value = Markup | string | number | boolean | null | undefined | readonly Value[]

function render(value: Value): string {
  if (value instanceof Markup) return value.text
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

/** Markup from a template: values are escaped, arrays are joined, null/undefined/false are left out. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Markup {
  let out = strings[0]
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]
  return new Markup(out)
}

/** Markup this module's callers built themselves (the SVG charts); never user input. */
export const trusted = (text: string) => new Markup(text)
