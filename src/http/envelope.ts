/** Success envelopes (docs/api.md) and the schema builders that document and serialize them. */
import { Type, type TSchema } from 'typebox'

export interface PageInfo {
  page: number
  perPage: number
  total: number
}

export const ok = <T>(data: T) => ({ success: true as const, data })
export const okItems = <T>(items: T[]) => ({ success: true as const, items })
export const okPage = <T>(items: T[], { page, perPage, total }: PageInfo) => ({
  success: true as const,
  items,
  page,
  per_page: perPage,
  total,
  pages: Math.ceil(total / perPage),
})

export const okSchema = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data })
export const okItemsSchema = <T extends TSchema>(item: T) => Type.Object({ success: Type.Literal(true), items: Type.Array(item) })
export const okPageSchema = <T extends TSchema>(item: T) =>
  Type.Object({
    success: Type.Literal(true),
    items: Type.Array(item),
    page: Type.Integer(),
    per_page: Type.Integer(),
    total: Type.Integer(),
    pages: Type.Integer(),
  })

export const ErrorResponse = Type.Object({
  success: Type.Literal(false),
  error: Type.Object({ code: Type.String(), message: Type.String() }),
})
