/** The files module's public surface: what other modules may use. */
export { releaseUploads } from './collect.js'
export { sendFile } from './serve.js'
export { insertUploadRow, isSharedWith, requireUploaded, served, upload, uploadByServedPath } from './service.js'
export type { Attachment } from './service.js'
