/** The premium module's public surface: what other modules may use. */
export { Order } from './schemas.js'
export { createPromo, deactivatePromo, grantPremium, listPromos, presentOrder } from './service.js'
export type { NewPromo } from './service.js'
