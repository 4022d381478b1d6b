/**
 * The app's start: who is signed in (the cookie session; without one, the login page), then the
 * live connection, whose first `ready` loads the chat list (so nothing sent in between is missed:
 * it arrives over the socket, and a message that arrives both ways is shown once).
 */
import { render } from 'preact'
import { api, data, describe, loadSession, setCsrfToken } from './api'
import { App } from './components/App'
import { Gateway } from './gateway'
import { chatsLoaded, loadChats, me, notice } from './store'
import { loadStories } from './stories'
import { applyTheme } from './theme'
import './styles.css'

async function start() {
  const root = document.getElementById('app')!
  try {
    const session = await loadSession()
    setCsrfToken(session.csrf_token)
    me.value = session.user
  } catch (error) {
    root.innerHTML = ''
    const p = document.createElement('p')
    p.setAttribute('role', 'alert')
    p.className = 'boot'
    p.textContent = `Tern could not start: ${describe(error)}`
    root.append(p)
    return
  }
  render(<App />, root)
  const gateway = new Gateway(async () => {
    await loadChats().catch((error) => (notice.value = describe(error)))
    void loadStories().catch(() => {})
  })
  gateway.connect()
  // the list does not wait for the socket forever: if it cannot connect, the list still shows
  setTimeout(() => !chatsLoaded.value && void loadChats().catch((error) => (notice.value = describe(error))), 3000)
  data(api.GET('/api.v2/api/settings'))
    .then((s) => applyTheme(String(s.settings.theme ?? 'system')))
    .catch(() => {})
}

void start()
