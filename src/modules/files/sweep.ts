/** The upload-sweep job (src/jobs/): expired unfinished uploads in this instance's directory go, with their bytes. */
import type { AppContext } from '../../context.js'
import { sweepExpired } from './chunked.js'
import { sweepExpiredTus } from './tus.js'

export async function sweepExpiredUploads(ctx: AppContext) {
  const [chunked, tus] = await Promise.all([sweepExpired(ctx), sweepExpiredTus(ctx)])
  return { chunked, tus }
}
