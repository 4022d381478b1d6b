/** My profile (name, bio) and settings (theme), signing out, and the account (Account.tsx). */
import { useSignal } from '@preact/signals'
import { useEffect } from 'preact/hooks'
import { api, data, describe, ok } from '../api'
import { applyTheme } from '../theme'
import { me } from '../store'
import { Account } from './Account'
import { Icon } from './Icon'

export function Profile() {
  const name = useSignal(me.value?.display_name ?? '')
  const bio = useSignal(me.value?.bio ?? '')
  const theme = useSignal('system')
  const status = useSignal<string | null>(null)
  const error = useSignal<string | null>(null)
  useEffect(() => {
    data(api.GET('/api.v2/api/settings'))
      .then((s) => (theme.value = String(s.settings.theme ?? 'system')))
      .catch(() => {})
    data(api.GET('/api.v2/api/auth/me'))
      .then((u) => {
        name.value = u.display_name ?? ''
        bio.value = u.bio ?? ''
      })
      .catch(() => {})
  }, [])
  const save = async (event: Event) => {
    event.preventDefault()
    error.value = null
    status.value = null
    try {
      const user = await data(api.POST('/api.v2/api/profile/update', { body: { display_name: name.value.trim(), bio: bio.value } }))
      me.value = { ...me.value!, ...user, id: me.value!.id }
      await ok(api.POST('/api.v2/api/settings/update', { body: { key: 'theme', value: theme.value } }))
      applyTheme(theme.value)
      status.value = 'Saved.'
    } catch (e) {
      error.value = describe(e)
    }
  }
  return (
    <section class="page" aria-labelledby="profile-title">
      <header class="bar">
        <a href="/app" class="icon back" aria-label="Back to chats">
          <Icon name="back" />
        </a>
        <h2 id="profile-title">Profile and settings</h2>
      </header>
      <div class="page-body">
        <form class="page-section" onSubmit={save}>
          <div class="card">
            <p class="muted">Signed in as @{me.value?.username}</p>
            <label for="profile-name">Display name</label>
            <input
              id="profile-name"
              required
              maxLength={64}
              value={name.value}
              onInput={(e) => (name.value = (e.target as HTMLInputElement).value)}
            />
            <label for="profile-bio">Bio</label>
            <textarea
              id="profile-bio"
              maxLength={70}
              rows={2}
              value={bio.value}
              onInput={(e) => (bio.value = (e.target as HTMLTextAreaElement).value)}
            />
          </div>
          <div class="card">
            <label for="profile-theme">Theme</label>
            <select id="profile-theme" value={theme.value} onChange={(e) => (theme.value = (e.target as HTMLSelectElement).value)}>
              <option value="system">Same as the system</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </div>
          {error.value ? (
            <p role="alert" class="error">
              {error.value}
            </p>
          ) : null}
          <p role="status">{status.value}</p>
          <div class="row-form">
            <button type="submit">Save</button>
            <a href="/logout" class="button secondary" data-native>
              Sign out
            </a>
          </div>
        </form>
        <Account />
      </div>
    </section>
  )
}
