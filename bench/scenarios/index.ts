/** Every scenario, in the order `npm run bench` runs them. A new scenario is appended. */
import type { Scenario } from '../lib/scenario.js'
import { broadcast, broadcastPg } from './broadcast.js'
import { botWebhooks } from './bot-webhooks.js'
import { botPolling } from './bot-polling.js'
import { channelFanout } from './channel-fanout.js'
import { channels } from './channels.js'
import { chatList } from './chat-list.js'
import { contacts } from './contacts.js'
import { historyDepth } from './history-depth.js'
import { idle } from './idle.js'
import { idleWs } from './idle-ws.js'
import { messageSearch, messageSearchPg } from './message-search.js'
import { sendCpu } from './send-cpu.js'
import { sendPg } from './send-pg.js'
import { search, searchPg } from './search.js'
import { sendThroughput } from './send-throughput.js'
import { socketSends } from './socket-sends.js'
import { stories } from './stories.js'
import { upload } from './upload.js'
import { videoSignaling } from './video-signaling.js'
import { wsLatency } from './ws-latency.js'

export const scenarios: Scenario[] = [
  sendThroughput,
  socketSends,
  sendPg,
  wsLatency,
  historyDepth,
  chatList,
  idleWs,
  channels,
  channelFanout,
  upload,
  stories,
  search,
  searchPg,
  messageSearch,
  messageSearchPg,
  contacts,
  sendCpu,
  broadcast,
  broadcastPg,
  botWebhooks,
  botPolling,
  videoSignaling,
  idle,
]
