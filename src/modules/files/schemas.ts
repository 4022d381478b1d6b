import { Type, type Static } from 'typebox'
import { Nullable, Timestamp } from '../../http/schemas.js'

/** What an upload returns (`/files/upload`, `/uploads/complete`, a finished tus upload). */
export const FileView = Type.Object({
  id: Type.Integer(),
  path: Type.String(),
  url: Type.String(),
  size: Type.Integer(),
  mime_type: Type.String(),
  hash: Type.String({ description: 'SHA-256 of the bytes, hex' }),
  file_name: Type.String(),
  file_type: Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('audio'), Type.Literal('document')]),
  preview_size: Type.Union([Type.Literal('big'), Type.Literal('medium'), Type.Literal('none')]),
  thumbnail_path: Nullable(Type.String()),
  thumbnail_url: Nullable(Type.String()),
  width: Nullable(Type.Integer()),
  height: Nullable(Type.Integer()),
  created_at: Timestamp,
})
export type FileView = Static<typeof FileView>

const SessionId = Type.String({ minLength: 1, maxLength: 64 })

export const StartUploadBody = Type.Object(
  {
    file_name: Type.String({ minLength: 1, maxLength: 255 }),
    size: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    mime_type: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
)
export type StartUploadBody = Static<typeof StartUploadBody>

export const UploadSessionView = Type.Object({
  session_id: Type.String(),
  offset: Type.Integer({ description: 'bytes received so far' }),
  size: Type.Integer(),
  expires_at: Timestamp,
})
export type UploadSessionView = Static<typeof UploadSessionView>

export const SessionParams = Type.Object({ session_id: SessionId }, { additionalProperties: false })

export const CompleteUploadBody = Type.Object(
  {
    session_id: SessionId,
    hash: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'SHA-256 of the whole file, hex' })),
  },
  { additionalProperties: false },
)
