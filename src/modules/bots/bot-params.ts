/**
 * A Bot API call's parameters, from the query string and a JSON, urlencoded or multipart body,
 * read the way Telegram reads them: numbers and booleans may come as text, objects and arrays as
 * JSON text. Every name and value is the client's: they live in a Map, never as keys of an object.
 */
export class BotApiError extends Error {
  constructor(
    readonly errorCode: number,
    readonly description: string,
    readonly parameters?: { retry_after?: number },
  ) {
    super(description)
    this.name = 'BotApiError'
  }
}

export const badRequest = (what: string) => new BotApiError(400, `Bad Request: ${what}`)

/** A file part of a multipart body (sendPhoto, sendDocument). */
export class InputFile {
  constructor(
    readonly data: Buffer,
    readonly filename: string | undefined,
  ) {}
}

/**
 * `text`, unless it holds what PostgreSQL cannot store (U+0000) or what is not Unicode (a lone
 * surrogate): refused alike on both databases, as Tern's own validation does (http/validation.ts).
 */
export function storableText(text: string, name: string): string {
  if (/[\0\p{Cs}]/u.test(text)) throw badRequest(`${name} contains a NUL character or invalid Unicode`)
  return text
}

export class Params {
  constructor(private readonly values: Map<string, unknown>) {}

  /** Own properties of a parsed JSON object, query string or form. */
  static from(...sources: unknown[]): Params {
    const values = new Map<string, unknown>()
    for (const source of sources) {
      if (source instanceof Map) for (const [k, v] of source) values.set(String(k), v)
      else if (source !== null && typeof source === 'object' && !Array.isArray(source) && !Buffer.isBuffer(source)) {
        for (const key of Object.keys(source)) values.set(key, (source as Record<string, unknown>)[key])
      }
    }
    return new Params(values)
  }

  private raw(name: string): unknown {
    const value = this.values.get(name)
    return value === null ? undefined : value
  }

  has(name: string) {
    return this.raw(name) !== undefined
  }

  int(name: string, options: { required: true; min?: number; max?: number }): number
  int(name: string, options?: { required?: boolean; min?: number; max?: number }): number | undefined
  int(name: string, options: { required?: boolean; min?: number; max?: number } = {}): number | undefined {
    const value = this.raw(name)
    if (value === undefined || value === '') {
      if (options.required) throw badRequest(`${name} is required`)
      return undefined
    }
    const number =
      typeof value === 'number' ? value : typeof value === 'string' && /^-?\d{1,16}$/.test(value.trim()) ? Number(value.trim()) : NaN
    if (!Number.isSafeInteger(number)) throw badRequest(`${name} must be an integer`)
    if (options.min !== undefined && number < options.min) throw badRequest(`${name} must be at least ${options.min}`)
    if (options.max !== undefined && number > options.max) throw badRequest(`${name} must be at most ${options.max}`)
    return number
  }

  string(name: string, options: { required: true; max?: number }): string
  string(name: string, options?: { required?: boolean; max?: number }): string | undefined
  string(name: string, options: { required?: boolean; max?: number } = {}): string | undefined {
    const value = this.raw(name)
    if (value === undefined) {
      if (options.required) throw badRequest(`${name} is required`)
      return undefined
    }
    const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined
    if (text === undefined) throw badRequest(`${name} must be a string`)
    if (options.max !== undefined && text.length > options.max) throw badRequest(`${name} is too long (at most ${options.max} characters)`)
    return storableText(text, name)
  }

  bool(name: string): boolean | undefined {
    const value = this.raw(name)
    if (value === undefined) return undefined
    if (value === true || value === 'true' || value === '1' || value === 1) return true
    if (value === false || value === 'false' || value === '0' || value === 0 || value === '') return false
    throw badRequest(`${name} must be a boolean`)
  }

  /** An object or array, sent as JSON or as JSON text. */
  json(name: string): unknown {
    const value = this.raw(name)
    if (value === undefined) return undefined
    if (typeof value === 'string') {
      try {
        return JSON.parse(value) as unknown
      } catch {
        throw badRequest(`can't parse ${name} JSON object`)
      }
    }
    if (typeof value === 'object') return value
    throw badRequest(`${name} must be a JSON object or array`)
  }

  /**
   * A file to send: a multipart file part, or a string (a file_id, or a URL); `attach://<name>`
   * names another part of the body, as grammY sends files.
   */
  input(name: string): InputFile | string | undefined {
    const value = this.raw(name)
    if (value === undefined || value instanceof InputFile) return value
    if (typeof value !== 'string') throw badRequest(`${name} must be a file or a file_id`)
    if (!value.startsWith('attach://')) return value
    const part = this.raw(value.slice('attach://'.length))
    if (!(part instanceof InputFile)) throw badRequest(`${name}: the body has no file part named "${value.slice(9, 73)}"`)
    return part
  }

  stringArray(name: string, max: number): string[] | undefined {
    const value = this.json(name)
    if (value === undefined) return undefined
    if (!Array.isArray(value) || value.length > max || !value.every((v) => typeof v === 'string' && v.length <= 64)) {
      throw badRequest(`${name} must be an array of at most ${max} strings`)
    }
    return value as string[]
  }
}

/** A plain JSON object's own field, or undefined (never the prototype's). */
export const field = (object: unknown, name: string): unknown =>
  object !== null && typeof object === 'object' && !Array.isArray(object) && Object.hasOwn(object, name)
    ? (object as Record<string, unknown>)[name]
    : undefined
