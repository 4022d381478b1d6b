/** Every migration, in order. Append new ones at the end; never edit a landed one. */
import type { Migration } from 'kysely'
import * as usersAndSessions from './2026-11-21T00-00-users-and-sessions.js'
import * as chatsMessagesUpdates from './2026-11-21T01-00-chats-messages-updates.js'
import * as messageActions from './2026-11-21T02-00-message-actions.js'
import * as chatActivity from './2026-11-21T03-00-chat-activity.js'
import * as groupsChannels from './2026-11-21T04-00-groups-channels.js'
import * as files from './2026-11-21T05-00-files.js'
import * as sendPath from './2026-11-21T06-00-send-path.js'
import * as updateRefs from './2026-11-21T07-00-update-refs.js'
import * as sqliteSeqFromLog from './2026-11-21T08-00-sqlite-seq-from-log.js'
import * as scheduledClientId from './2026-11-23T00-00-scheduled-client-id.js'
import * as jobs from './2026-11-24T00-00-jobs.js'
import * as storiesContacts from './2026-11-25T00-00-stories-contacts.js'
import * as settingsReports from './2026-11-25T01-00-settings-reports.js'
import * as pinsArchive from './2026-11-25T02-00-pins-archive.js'
import * as polls from './2026-11-25T03-00-polls.js'
import * as music from './2026-11-25T04-00-music.js'
import * as userSearch from './2026-11-25T05-00-user-search.js'
import * as referralsPremiumOrders from './2026-11-25T06-00-referrals-premium-orders.js'
import * as profilePrivacy from './2026-11-25T07-00-profile-privacy.js'
import * as messageSearch from './2026-11-25T08-00-message-search.js'
import * as userSearchNames from './2026-11-25T09-00-user-search-names.js'
import * as premium from './2026-11-25T10-00-premium.js'
import * as reportResolution from './2026-11-25T11-00-report-resolution.js'
import * as adminArea from './2026-11-25T20-00-admin-area.js'
import * as twoFactor from './2026-11-25T21-00-two-factor.js'
import * as loginCodes from './2026-11-25T21-10-login-codes.js'
import * as emailVerification from './2026-11-25T21-20-email-verification.js'
import * as push from './2026-11-25T22-00-push.js'
import * as bots from './2026-11-25T22-10-bots.js'
import * as qrLogin from './2026-11-25T22-20-qr-login.js'
import * as identityAccounts from './2026-11-25T22-30-identity-accounts.js'
import * as calls from './2026-11-25T22-40-calls.js'
import * as botWebhooks from './2026-11-25T23-00-bot-webhooks.js'
import * as botBridgesCallbacks from './2026-11-25T23-20-bot-bridges-callbacks.js'

import * as videoRooms from './2026-11-25T23-50-video-rooms.js'
import * as messageSearchFile from './2026-11-27T20-00-message-search-file.js'
import * as recentUpdates from './2026-11-29T02-00-recent-updates.js'
import * as recentUpdatesKeyed from './2026-11-29T10-00-recent-updates-keyed.js'
import * as updateRuns from './2026-12-02T00-00-update-runs.js'
import * as recentInWriteOrder from './2026-12-02T10-00-recent-updates-in-write-order.js'
import * as videoCallPeers from './2026-12-04T21-00-video-call-peers.js'
import * as accountLifecycle from './2026-12-07T18-00-account-lifecycle.js'
import * as emailSetAtFromNow from './2026-12-07T19-00-email-set-at-from-now.js'
import * as qrDeviceSecret from './2026-12-07T19-00-qr-device-secret.js'
import * as referralShares from './2026-12-07T19-10-referral-shares.js'
import * as workQueue from './2026-12-08T00-00-work-queue.js'
export const migrations: Record<string, Migration> = {
  '2026-11-21T00-00-users-and-sessions': usersAndSessions,
  '2026-11-21T01-00-chats-messages-updates': chatsMessagesUpdates,
  '2026-11-21T02-00-message-actions': messageActions,
  '2026-11-21T03-00-chat-activity': chatActivity,
  '2026-11-21T04-00-groups-channels': groupsChannels,
  '2026-11-21T05-00-files': files,
  '2026-11-21T06-00-send-path': sendPath,
  '2026-11-21T07-00-update-refs': updateRefs,
  '2026-11-21T08-00-sqlite-seq-from-log': sqliteSeqFromLog,
  '2026-11-23T00-00-scheduled-client-id': scheduledClientId,
  '2026-11-24T00-00-jobs': jobs,
  '2026-11-25T00-00-stories-contacts': storiesContacts,
  '2026-11-25T01-00-settings-reports': settingsReports,
  '2026-11-25T02-00-pins-archive': pinsArchive,
  '2026-11-25T03-00-polls': polls,
  '2026-11-25T04-00-music': music,
  '2026-11-25T05-00-user-search': userSearch,
  '2026-11-25T06-00-referrals-premium-orders': referralsPremiumOrders,
  '2026-11-25T07-00-profile-privacy': profilePrivacy,
  '2026-11-25T08-00-message-search': messageSearch,
  '2026-11-25T09-00-user-search-names': userSearchNames,
  '2026-11-25T10-00-premium': premium,
  '2026-11-25T11-00-report-resolution': reportResolution,
  '2026-11-25T20-00-admin-area': adminArea,
  '2026-11-25T21-00-two-factor': twoFactor,
  '2026-11-25T21-10-login-codes': loginCodes,
  '2026-11-25T21-20-email-verification': emailVerification,
  '2026-11-25T22-00-push': push,
  '2026-11-25T22-10-bots': bots,
  '2026-11-25T22-20-qr-login': qrLogin,
  '2026-11-25T22-30-identity-accounts': identityAccounts,
  '2026-11-25T22-40-calls': calls,
  '2026-11-25T23-00-bot-webhooks': botWebhooks,
  '2026-11-25T23-20-bot-bridges-callbacks': botBridgesCallbacks,
  '2026-11-25T23-50-video-rooms': videoRooms,
  '2026-11-27T20-00-message-search-file': messageSearchFile,
  '2026-11-29T02-00-recent-updates': recentUpdates,
  '2026-11-29T10-00-recent-updates-keyed': recentUpdatesKeyed,
  '2026-12-02T00-00-update-runs': updateRuns,
  '2026-12-02T10-00-recent-updates-in-write-order': recentInWriteOrder,
  '2026-12-04T21-00-video-call-peers': videoCallPeers,
  '2026-12-07T18-00-account-lifecycle': accountLifecycle,
  '2026-12-07T19-00-email-set-at-from-now': emailSetAtFromNow,
  '2026-12-07T19-00-qr-device-secret': qrDeviceSecret,
  '2026-12-07T19-10-referral-shares': referralShares,
  '2026-12-08T00-00-work-queue': workQueue,
}
