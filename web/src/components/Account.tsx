/**
 * The account part of the settings screen: change the password (with the current one, or for an
 * account without one a code: TOTP, or one mailed for the step), download my data, and delete the
 * account after a confirmation.
 */
import { useSignal } from '@preact/signals'
import { api, data, describe } from '../api'

type Proof = 'password' | 'code'

/** The proof a step needs: the current password, or a code (with a button that mails one). */
function ProofField(props: {
  id: string
  step: 'password' | 'delete-account'
  proof: Proof
  value: string
  onProof: (p: Proof) => void
  onValue: (v: string) => void
}) {
  const note = useSignal<string | null>(null)
  const sendCode = async () => {
    note.value = null
    try {
      const sent = await data(
        props.step === 'password' ? api.POST('/api.v2/api/auth/password/code') : api.POST('/api.v2/api/auth/delete-account/code'),
      )
      note.value = `A code is on its way to ${sent.email}.`
    } catch (e) {
      note.value = describe(e)
    }
  }
  if (props.proof === 'password') {
    return (
      <>
        <label for={props.id}>{props.step === 'password' ? 'Current password' : 'Your password'}</label>
        <input
          id={props.id}
          type="password"
          autoComplete="current-password"
          required
          maxLength={256}
          value={props.value}
          onInput={(e) => props.onValue((e.target as HTMLInputElement).value)}
        />
        <button type="button" class="link" onClick={() => props.onProof('code')}>
          My account has no password
        </button>
      </>
    )
  }
  return (
    <>
      <label for={props.id}>A code from your authenticator app, or from the mail</label>
      <input
        id={props.id}
        inputMode="numeric"
        autoComplete="one-time-code"
        required
        maxLength={32}
        value={props.value}
        onInput={(e) => props.onValue((e.target as HTMLInputElement).value)}
      />
      <div class="row-form">
        <button type="button" class="secondary" onClick={sendCode}>
          Email me a code
        </button>
        <button type="button" class="link" onClick={() => props.onProof('password')}>
          Use my password instead
        </button>
      </div>
      {note.value ? (
        <p role="status" class="small">
          {note.value}
        </p>
      ) : null}
    </>
  )
}

function ChangePassword() {
  const proof = useSignal<Proof>('password')
  const current = useSignal('')
  const next = useSignal('')
  const repeat = useSignal('')
  const status = useSignal<string | null>(null)
  const error = useSignal<string | null>(null)
  const busy = useSignal(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    status.value = null
    error.value = null
    if (next.value.length < 8) return void (error.value = 'The new password must be at least 8 characters.')
    if (next.value !== repeat.value) return void (error.value = 'The two new passwords differ.')
    busy.value = true
    try {
      const body =
        proof.value === 'password'
          ? { current_password: current.value, new_password: next.value }
          : { code: current.value.trim(), new_password: next.value }
      const done = await data(api.POST('/api.v2/api/auth/password', { body }))
      current.value = next.value = repeat.value = ''
      proof.value = 'password'
      status.value =
        done.sessions_ended === 0
          ? 'Password changed.'
          : `Password changed. ${done.sessions_ended} other ${done.sessions_ended === 1 ? 'session was' : 'sessions were'} signed out.`
    } catch (e) {
      error.value = describe(e)
    } finally {
      busy.value = false
    }
  }
  return (
    <form class="card" aria-labelledby="password-title" onSubmit={submit}>
      <h3 id="password-title">Change password</h3>
      <ProofField
        id="password-current"
        step="password"
        proof={proof.value}
        value={current.value}
        onProof={(p) => {
          proof.value = p
          current.value = ''
        }}
        onValue={(v) => (current.value = v)}
      />
      <label for="password-new">New password (at least 8 characters)</label>
      <input
        id="password-new"
        type="password"
        autoComplete="new-password"
        required
        minLength={8}
        maxLength={256}
        value={next.value}
        onInput={(e) => (next.value = (e.target as HTMLInputElement).value)}
      />
      <label for="password-repeat">New password again</label>
      <input
        id="password-repeat"
        type="password"
        autoComplete="new-password"
        required
        minLength={8}
        maxLength={256}
        value={repeat.value}
        onInput={(e) => (repeat.value = (e.target as HTMLInputElement).value)}
      />
      {error.value ? (
        <p role="alert" class="error">
          {error.value}
        </p>
      ) : null}
      <p role="status">{status.value}</p>
      <button type="submit" disabled={busy.value}>
        Change password
      </button>
    </form>
  )
}

function DeleteAccount() {
  const open = useSignal(false)
  const proof = useSignal<Proof>('password')
  const secret = useSignal('')
  const understood = useSignal(false)
  const error = useSignal<string | null>(null)
  const busy = useSignal(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    error.value = null
    if (!understood.value) return void (error.value = 'Tick the box to confirm.')
    busy.value = true
    try {
      const body = proof.value === 'password' ? { password: secret.value } : { code: secret.value.trim() }
      await data(api.POST('/api.v2/api/auth/delete-account', { body }))
      location.assign('/')
    } catch (e) {
      error.value = describe(e)
      busy.value = false
    }
  }
  if (!open.value) {
    return (
      <div class="card">
        <h3>Delete account</h3>
        <p class="muted small">
          Your profile, email, phone and sign-in methods are erased; your messages stay in others' chats as from "Deleted account".
        </p>
        <button type="button" class="danger" onClick={() => (open.value = true)}>
          Delete my account…
        </button>
      </div>
    )
  }
  return (
    <form class="card" aria-labelledby="delete-title" onSubmit={submit}>
      <h3 id="delete-title">Delete account</h3>
      <p role="alert">This cannot be undone. Every session of yours is signed out, and your username is free for others after a while.</p>
      <ProofField
        id="delete-proof"
        step="delete-account"
        proof={proof.value}
        value={secret.value}
        onProof={(p) => {
          proof.value = p
          secret.value = ''
        }}
        onValue={(v) => (secret.value = v)}
      />
      <label class="inline">
        <input type="checkbox" checked={understood.value} onChange={(e) => (understood.value = (e.target as HTMLInputElement).checked)} />I
        understand that my account is deleted for good
      </label>
      {error.value ? (
        <p role="alert" class="error">
          {error.value}
        </p>
      ) : null}
      <div class="row-form">
        <button type="submit" class="danger" disabled={busy.value || !understood.value}>
          Delete my account
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            open.value = false
            secret.value = ''
            understood.value = false
          }}
        >
          Cancel
        </button>
      </div>
    </form>
  )
}

export function Account() {
  return (
    <section class="page-section" aria-labelledby="account-title">
      <h2 id="account-title">Account</h2>
      <ChangePassword />
      <div class="card">
        <h3>Your data</h3>
        <p class="muted small">
          One JSON file: your profile, settings, sessions, contacts, chats, the messages you sent, saved messages, stories and orders.
        </p>
        <a class="button secondary" href="/api.v2/api/auth/export" download data-native>
          Download my data
        </a>
      </div>
      <DeleteAccount />
    </section>
  )
}
