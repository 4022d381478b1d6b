/**
 * The payment-provider seam: premium orders are paid through a PaymentProvider. Two are built in,
 * so the seam is proven by two implementations: `test` (the default) pays at once — or declines a
 * `declined_card`, for trying the failure path — and `manual` leaves every order pending until an
 * admin marks it paid (a bank transfer, an invoice). A real provider (a card acquirer) implements
 * the same four steps; its webhook tells Tern about payments settled later.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { PremiumOrderRow } from '../../db/tables.js'

export type PaymentOutcome = 'paid' | 'pending' | 'failed'

export interface PaymentResult {
  outcome: PaymentOutcome
  /** the provider's own id of the payment */
  reference: string | null
  /** why a payment failed, for the order's owner */
  reason?: string
}

export interface PaymentProvider {
  readonly name: string
  /** the payment methods it takes; the first is used when a request names none */
  readonly methods: readonly string[]
  /** asks for the order's amount; may settle at once (paid, failed) or later (pending) */
  createPayment(order: PremiumOrderRow): Promise<PaymentResult>
  /** settles a pending payment by hand (the admin's mark-paid) */
  confirm(order: PremiumOrderRow): Promise<PaymentResult>
  /** gives a paid order's money back */
  refund(order: PremiumOrderRow): Promise<{ refunded: boolean }>
  /**
   * A notification from the provider about a payment settled later: the raw body and headers as
   * they arrived, checked against `secret` (PAYMENT_WEBHOOK_SECRET). Answers the order and its
   * outcome; throws WebhookRefused when the signature or the body is wrong.
   */
  webhook?(
    rawBody: string,
    headers: Record<string, string | string[] | undefined>,
    secret: string,
  ): Promise<{ orderId: number; result: PaymentResult }>
}

export class WebhookRefused extends Error {
  constructor(
    readonly reason: 'signature' | 'body',
    message: string,
  ) {
    super(message)
  }
}

/** `sha256=<hex HMAC-SHA256 of the raw body>`, compared in constant time. */
export function signatureMatches(rawBody: string, header: string | string[] | undefined, secret: string): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'))
  const given = Buffer.from(header.slice('sha256='.length))
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/**
 * Pays at once; a `declined_card` is declined; an `async_card` stays pending until a signed webhook
 * (`POST /premium/webhook/test`, `X-Tern-Signature: sha256=<HMAC of the body>`) settles it, as a
 * card acquirer's 3-D Secure step would. For development, tests and demos.
 */
export const testProvider: PaymentProvider = {
  name: 'test',
  methods: ['card', 'declined_card', 'async_card'],
  async createPayment(order) {
    if (order.payment_method === 'declined_card')
      return { outcome: 'failed', reference: `test_${order.id}`, reason: 'The card was declined' }
    if (order.payment_method === 'async_card') return { outcome: 'pending', reference: `test_${order.id}` }
    return { outcome: 'paid', reference: `test_${order.id}` }
  },
  async webhook(rawBody, headers, secret) {
    if (!signatureMatches(rawBody, headers['x-tern-signature'], secret))
      throw new WebhookRefused('signature', 'The signature does not match')
    let body: unknown
    try {
      body = JSON.parse(rawBody)
    } catch {
      throw new WebhookRefused('body', 'The body is not JSON')
    }
    const { order_id: orderId, outcome } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>
    if (typeof orderId !== 'number' || !Number.isSafeInteger(orderId) || orderId < 1 || (outcome !== 'paid' && outcome !== 'failed')) {
      throw new WebhookRefused('body', 'The body must be {order_id, outcome: paid | failed}')
    }
    return { orderId, result: { outcome, reference: `test_${orderId}` } }
  },
  async confirm(order) {
    return { outcome: 'paid', reference: order.provider_ref ?? `test_${order.id}` }
  },
  async refund() {
    return { refunded: true }
  },
}

/** Every order waits for an admin to mark it paid (POST /api/admin/orders/{id}/mark-paid). */
export const manualProvider: PaymentProvider = {
  name: 'manual',
  methods: ['bank_transfer', 'invoice'],
  async createPayment(order) {
    return { outcome: 'pending', reference: `manual_${order.id}` }
  },
  async confirm(order) {
    return { outcome: 'paid', reference: order.provider_ref ?? `manual_${order.id}` }
  },
  async refund() {
    // the money goes back outside Tern, as it came in
    return { refunded: true }
  },
}

const PROVIDERS = new Map<string, PaymentProvider>([
  [testProvider.name, testProvider],
  [manualProvider.name, manualProvider],
])

/** The provider by name (the configured one for new orders; an order's own for settling it). */
export function providerNamed(name: string): PaymentProvider | undefined {
  return PROVIDERS.get(name)
}
