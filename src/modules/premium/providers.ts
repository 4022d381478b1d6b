/**
 * The payment-provider seam: premium orders are paid through a PaymentProvider. Two are built in,
 * so the seam is proven by two implementations: `test` (the default) pays at once — or declines a
 * `declined_card`, for trying the failure path — and `manual` leaves every order pending until an
 * admin marks it paid (a bank transfer, an invoice). A real provider (a card acquirer) implements
 * the same four steps; its webhook tells Tern about payments settled later.
 */
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
   * A notification from the provider about a payment (its signature checked by the provider);
   * null when it is not one of Tern's. Built-in providers settle synchronously and have none.
   */
  webhook?(body: unknown, headers: Record<string, string | string[] | undefined>): Promise<{ orderId: number; result: PaymentResult } | null>
}

/** Pays at once; a `declined_card` is declined. For development, tests and demos. */
export const testProvider: PaymentProvider = {
  name: 'test',
  methods: ['card', 'declined_card'],
  async createPayment(order) {
    if (order.payment_method === 'declined_card') return { outcome: 'failed', reference: `test_${order.id}`, reason: 'The card was declined' }
    return { outcome: 'paid', reference: `test_${order.id}` }
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
