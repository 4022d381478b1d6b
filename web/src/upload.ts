/**
 * Uploads with progress: a small file in one multipart POST /files/upload over XHR (whose upload
 * progress events drive the bar); a large one over tus (/uploads/tus, resumable: a dropped
 * connection resumes where the server stands). tus-js-client is loaded only when a large file is
 * picked, so it is not part of the first page load.
 */
import { ApiError, csrfHeader, goToLogin } from './api'
import type { UploadedFile } from './types'

/** files above this go over tus */
export const TUS_THRESHOLD = 8 * 1024 * 1024

export interface Uploaded {
  path: string
  url: string | null
  thumbnail_url: string | null
  file_name: string
  file_type: string | null
  size: number
}

export function upload(file: File, onProgress: (sent: number, total: number) => void, signal?: AbortSignal): Promise<Uploaded> {
  return file.size > TUS_THRESHOLD ? uploadTus(file, onProgress, signal) : uploadXhr(file, onProgress, signal)
}

function uploadXhr(file: File, onProgress: (sent: number, total: number) => void, signal?: AbortSignal): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', '/files/upload')
    xhr.withCredentials = true
    for (const [name, value] of Object.entries(csrfHeader())) xhr.setRequestHeader(name, value)
    xhr.setRequestHeader('Accept', 'application/json')
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size)
    xhr.onerror = () => reject(new ApiError(0, 'network', 'The upload was interrupted: no connection to the server.'))
    xhr.onabort = () => reject(new ApiError(0, 'aborted', 'The upload was cancelled.'))
    xhr.onload = () => {
      if (xhr.status === 401) return goToLogin()
      let body: { success?: boolean; data?: UploadedFile; error?: { code: string; message: string } } | null = null
      try {
        body = JSON.parse(xhr.responseText)
      } catch {
        body = null
      }
      if (xhr.status >= 400 || !body?.success || !body.data) {
        return reject(
          new ApiError(xhr.status, body?.error?.code ?? 'http_error', body?.error?.message ?? `The upload failed (${xhr.status}).`),
        )
      }
      const data = body.data
      onProgress(file.size, file.size)
      resolve({
        path: data.path,
        url: data.url,
        thumbnail_url: data.thumbnail_url,
        file_name: data.file_name,
        file_type: data.file_type,
        size: data.size,
      })
    }
    signal?.addEventListener('abort', () => xhr.abort())
    const form = new FormData()
    form.append('file', file, file.name)
    xhr.send(form)
  })
}

async function uploadTus(file: File, onProgress: (sent: number, total: number) => void, signal?: AbortSignal): Promise<Uploaded> {
  const tus = await import('tus-js-client')
  return new Promise((resolve, reject) => {
    let filePath: string | null = null
    const up = new tus.Upload(file, {
      endpoint: '/uploads/tus',
      chunkSize: 4 * 1024 * 1024,
      // a dropped connection (offline, a restart) is retried from where the server stands, also
      // while the browser still says it is offline (tus-js-client's default gives up then)
      retryDelays: [0, 1000, 2000, 3000, 5000, 5000, 10000, 10000, 20000, 20000, 30000],
      onShouldRetry: (error) => {
        const status = error.originalResponse?.getStatus() ?? 0
        return status === 0 || status >= 500 || status === 409 || status === 423 || status === 429
      },
      metadata: { filename: file.name, filetype: file.type || 'application/octet-stream' },
      headers: csrfHeader(),
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      onBeforeRequest: (req) => {
        const xhr = req.getUnderlyingObject() as XMLHttpRequest
        xhr.withCredentials = true
      },
      onAfterResponse: (_req, res) => {
        const path = res.getHeader('Tern-File-Path')
        if (path) filePath = path
      },
      onProgress: (sent, total) => onProgress(sent, total),
      onError: (error) => reject(new ApiError(0, 'upload_failed', `The upload failed: ${error.message}`)),
      onSuccess: () => {
        if (!filePath) return reject(new ApiError(0, 'upload_failed', 'The upload finished but the server named no file.'))
        resolve({
          path: filePath,
          url: `/uploads/${filePath}`,
          thumbnail_url: null,
          file_name: file.name,
          file_type: null,
          size: file.size,
        })
      },
    })
    signal?.addEventListener('abort', () => void up.abort(true))
    up.findPreviousUploads().then((previous) => {
      if (previous.length) up.resumeFromPreviousUpload(previous[0])
      up.start()
    }, reject)
  })
}
