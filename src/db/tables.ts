/**
 * The Database interface Kysely types queries with: one interface per table, snake_case, grouped by
 * module. Timestamps are epoch milliseconds; flags are 0/1; JSON columns are read with fromJson().
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

type Flag = number
type EpochMs = number

// users module
/** Who may see a part of a user's profile. */
export type Audience = 'everyone' | 'contacts' | 'nobody'

export interface UsersTable {
  id: Generated<number>
  username: string
  email: string | null
  email_verified: Generated<Flag>
  display_name: string
  password_hash: string | null
  avatar: string | null
  bio: Generated<string>
  status: Generated<string>
  status_emoji: Generated<string>
  phone: string | null
  birthday: string | null
  is_active: Generated<Flag>
  is_admin: Generated<Flag>
  is_bot: Generated<Flag>
  bot_webapp_url: string | null
  is_online: Generated<Flag>
  last_seen: EpochMs | null
  last_activity: EpochMs | null
  premium_expires_at: EpochMs | null
  /** the TOTP secret, encrypted (auth/secret-box.ts); set while two-factor is on */
  two_factor_secret: string | null
  /** a setup's secret (encrypted) until a code confirms it */
  two_factor_pending_secret: string | null
  /** the last TOTP time step a code was accepted for: a code works once */
  two_factor_last_step: number | null
  /** who sees the user's last seen and online state, phone number, avatar */
  privacy_last_seen: Generated<Audience>
  privacy_phone: Generated<Audience>
  privacy_avatar: Generated<Audience>
  /** the profile's link */
  link: string | null
  /** the platform's own account (`tern`): broadcasts and warnings come from it */
  is_system: Generated<Flag>
  /** how many warnings moderators have sent the user */
  warnings: Generated<number>
  appearance_settings: unknown | null
  deleted_at: EpochMs | null
  /** when `email` was set (an unconfirmed one lapses UNCONFIRMED_EMAIL_TTL_DAYS later); null: before this was kept, created_at counts */
  email_set_at: EpochMs | null
  created_at: EpochMs
}
export type UserRow = Selectable<UsersTable>
export type NewUserRow = Insertable<UsersTable>
export type UserUpdate = Updateable<UsersTable>

// sessions module
export interface UserSessionsTable {
  id: Generated<number>
  user_id: number
  token_hash: string
  token_prefix: string
  device: string | null
  ip_address: string | null
  user_agent: string | null
  created_at: EpochMs
  last_activity: EpochMs
  is_active: Generated<Flag>
  /** 1 when a TOTP or recovery code finished the login that opened the session */
  two_factor_verified: Generated<Flag>
  /** how the session was opened: password, otp, qr, oauth:<provider> */
  method: Generated<string>
}
export type SessionRow = Selectable<UserSessionsTable>

// auth module
export interface TwoFactorRecoveryCodesTable {
  id: Generated<number>
  user_id: number
  /** HMAC-SHA256 of the code under the server key */
  code_hash: string
  used_at: EpochMs | null
  created_at: EpochMs
}
/** A login waiting for its second step. */
export interface LoginTicketsTable {
  id: Generated<number>
  /** SHA-256 of the ticket */
  ticket_hash: string
  user_id: number
  stage: 'totp'
  method: string
  device: string | null
  attempts: Generated<number>
  expires_at: EpochMs
  used_at: EpochMs | null
  created_at: EpochMs
}
export type LoginTicketRow = Selectable<LoginTicketsTable>
/** The newest sign-in code mailed to an address (login_v3). */
export interface LoginCodesTable {
  id: Generated<number>
  /** the address, lower-cased */
  email_key: string
  /** null: no account has the address */
  user_id: number | null
  /** HMAC-SHA256 of the code under the server key */
  code_hash: string
  attempts: Generated<number>
  expires_at: EpochMs
  used_at: EpochMs | null
  created_at: EpochMs
}
export type LoginCodeRow = Selectable<LoginCodesTable>
/** An email confirmation link sent to a user. */
export interface EmailVerificationsTable {
  id: Generated<number>
  user_id: number
  /** the address the link confirms */
  email: string
  /** SHA-256 of the token */
  token_hash: string
  expires_at: EpochMs
  used_at: EpochMs | null
  created_at: EpochMs
  /** 1: the link claims an address another account has unconfirmed; it becomes the user's when opened */
  claim: Generated<Flag>
}
export type EmailVerificationRow = Selectable<EmailVerificationsTable>
export type AccountCodePurpose = 'password_reset' | 'set_password' | 'delete_account'
/** A code mailed for a password reset (subject: the address) or a signed-in step (subject: `user:<id>`). */
export interface AccountCodesTable {
  id: Generated<number>
  purpose: AccountCodePurpose
  subject: string
  /** null: no account has the address (the code is never sent) */
  user_id: number | null
  /** HMAC-SHA256 of the code under the server key */
  code_hash: string
  attempts: Generated<number>
  expires_at: EpochMs
  used_at: EpochMs | null
  created_at: EpochMs
}
export type AccountCodeRow = Selectable<AccountCodesTable>
/** A deleted account's former username, held back until released_at. */
export interface UsernameReservationsTable {
  /** lower-cased */
  username_key: string
  user_id: number
  released_at: EpochMs
}

// admin module
export interface ModLogsTable {
  id: Generated<number>
  admin_id: number | null
  action: string
  target_id: number | null
  details: string | null
  created_at: EpochMs
}
export type ModLogRow = Selectable<ModLogsTable>

export type BroadcastStatus = 'queued' | 'running' | 'done'
export interface BroadcastsTable {
  id: Generated<number>
  admin_id: number | null
  content: string
  status: BroadcastStatus
  total: number
  sent: Generated<number>
  cursor_user_id: Generated<number>
  last_user_id: number
  created_at: EpochMs
  started_at: EpochMs | null
  finished_at: EpochMs | null
}
export type BroadcastRow = Selectable<BroadcastsTable>

// stats module
export interface PlatformCountersTable {
  name: string
  value: number
}
export interface DailyCountersTable {
  /** UTC day, YYYY-MM-DD */
  day: string
  metric: string
  value: number
}

// chats module
export interface ChatsTable {
  id: Generated<number>
  chat_type: 'personal' | 'group' | 'channel'
  peer1_id: number | null
  peer2_id: number | null
  title: string | null
  description: string | null
  avatar: string | null
  created_by: number | null
  is_public: Generated<Flag>
  message_seq: Generated<number>
  last_message_id: number | null
  last_message_at: EpochMs | null
  created_at: EpochMs
  /** groups and channels: the current owner (created_by keeps the creator) */
  owner_id: number | null
  member_count: Generated<number>
  /** the last member position handed out (join order) */
  join_seq: Generated<number>
  /** the last seq of the chat's own event log (groups and channels) */
  event_seq: Generated<number>
  is_verified: Generated<Flag>
  is_forum: Generated<Flag>
  /** the permanent invite link's code */
  invite_code: string | null
}
export type ChatRow = Selectable<ChatsTable>

export interface ChatMembersTable {
  chat_id: number
  user_id: number
  role: Generated<string>
  joined_at: EpochMs
  read_seq: Generated<number>
  read_at: EpochMs | null
  /** personal chats: when the chat last had a message (or was created), the chat list's order */
  last_activity_at: EpochMs | null
  /** join order inside the chat (members pages) */
  position: number
}

export interface MemberBucketsTable {
  chat_id: number
  bucket: number
  members: number
}
export interface ChatEventsTable {
  chat_id: number
  seq: number
  type: string
  data: unknown
  created_at: EpochMs
}
export interface InviteLinksTable {
  id: Generated<number>
  chat_id: number
  code: string
  created_by: number | null
  uses: Generated<number>
  usage_limit: number | null
  expires_at: EpochMs | null
  revoked_at: EpochMs | null
  created_at: EpochMs
}
export type InviteLinkRow = Selectable<InviteLinksTable>
export interface GroupTopicsTable {
  id: Generated<number>
  chat_id: number
  title: string
  icon_emoji_id: string | null
  created_by: number | null
  created_at: EpochMs
}
export interface ChannelBindsTable {
  id: Generated<number>
  channel_id: number
  group_id: number
  created_at: EpochMs
}

// messages module
export interface MessagesTable {
  id: Generated<number>
  chat_id: number
  seq: number
  sender_id: number
  receiver_id: number | null
  content: Generated<string>
  reply_to_id: number | null
  forwarded_from: string | null
  forwarded_from_id: number | null
  file_path: string | null
  file_type: string | null
  file_name: string | null
  file_size: number | null
  thumbnail_path: string | null
  is_encrypted: Generated<Flag>
  encrypted_content: string | null
  encryption_key_id: string | null
  emoji: string | null
  emoji_file: string | null
  emoji_size: number | null
  emoji_count: number | null
  deleted_for_all: Generated<Flag>
  edited_at: EpochMs | null
  scheduled_at: EpochMs | null
  delivered_at: EpochMs | null
  read_at: EpochMs | null
  client_message_id: string | null
  created_at: EpochMs
  topic_id: number | null
  preview_size: string | null
  /** a poll posted as this message */
  poll_id: number | null
  /** relayed by a bot from another messenger (bridges), with that messenger's id */
  is_from_external: Generated<Flag>
  external_message_id: string | null
}
export type MessageRow = Selectable<MessagesTable>
export type NewMessageRow = Insertable<MessagesTable>

export interface MessageHiddenTable {
  user_id: number
  message_id: number
  created_at: EpochMs
}
export interface ReactionsTable {
  message_id: number
  user_id: number
  emoji: string
  created_at: EpochMs
}
export interface SavedMessagesTable {
  id: Generated<number>
  user_id: number
  message_id: number
  saved_at: EpochMs
}
export interface ScheduledMessagesTable {
  id: Generated<number>
  chat_id: number
  sender_id: number
  payload: unknown
  client_message_id: string | null
  /** the attachment's upload path (also in the payload), so the file collector sees it */
  file_path: string | null
  scheduled_at: EpochMs
  created_at: EpochMs
}
export type ScheduledMessageRow = Selectable<ScheduledMessagesTable>
export type NewScheduledMessageRow = Insertable<ScheduledMessagesTable>

// blocks module
export interface BlockedUsersTable {
  user_id: number
  blocked_user_id: number
  reason: string | null
  created_at: EpochMs
}

// realtime: the per-user update log
/** each user's latest seq */
export interface UpdateSeqsTable {
  user_id: number
  seq: number
}
export interface UpdatesTable {
  user_id: number
  seq: number
  type: string
  /** the event's data; null when `message_id` names the message instead (a personal message.new) */
  data: unknown | null
  message_id: number | null
  /**
   * A run of `message.new` entries in one row (realtime/updates.ts, SQLite's send fast path): a
   * JSON array of message ids, one per seq, ending at `seq`; `data` and `message_id` are null
   */
  message_ids: string | null
  created_at: EpochMs
}
/**
 * SQLite only: the update log's newest rows, in the order written (`id`); moved into `updates` a
 * slice of users at a time, each row within about a quarter second (realtime/updates.ts)
 */
export interface RecentUpdatesTable extends UpdatesTable {
  id: Generated<number>
}

// files module
export type FileType = 'image' | 'video' | 'audio' | 'document'
export type PreviewSize = 'big' | 'medium' | 'none'
/** stored bytes, once per SHA-256 */
export interface FileObjectsTable {
  hash: string
  storage_key: string
  size: number
  mime_type: string
  ext: string
  file_type: FileType
  width: number | null
  height: number | null
  thumbnail_key: string | null
  preview_size: PreviewSize
  created_at: EpochMs
}
export type FileObjectRow = Selectable<FileObjectsTable>
export interface FileUploadsTable {
  id: Generated<number>
  owner_id: number
  hash: string
  path: string
  thumbnail_path: string | null
  original_name: string
  size: number
  mime_type: string
  /** `chunked:<session id>` or `tus:<upload id>` */
  source: string | null
  created_at: EpochMs
}
export type FileUploadRow = Selectable<FileUploadsTable>
export interface UploadSessionsTable {
  id: string
  owner_id: number
  file_name: string
  size: number
  mime_type: string
  part_key: string
  expires_at: EpochMs
  created_at: EpochMs
}
export type UploadSessionRow = Selectable<UploadSessionsTable>

// contacts module
export interface ContactsTable {
  id: Generated<number>
  owner_id: number
  contact_user_id: number
  /** the owner's own name for the contact (custom_name) */
  display_name: string | null
  created_at: EpochMs
}
export type ContactRow = Selectable<ContactsTable>

// stories module
export type StoryMediaType = 'image' | 'video'
export type StoryPrivacy = 'everyone' | 'contacts' | 'selected'
export interface StoriesTable {
  id: Generated<number>
  user_id: number
  media_path: string
  media_type: StoryMediaType
  caption: string
  music_path: string | null
  privacy_type: StoryPrivacy
  view_count: Generated<number>
  like_count: Generated<number>
  reaction_count: Generated<number>
  created_at: EpochMs
  expires_at: EpochMs
}
export type StoryRow = Selectable<StoriesTable>
export interface StoryViewsTable {
  story_id: number
  viewer_id: number
  viewed_at: EpochMs
}
export interface StoryLikesTable {
  story_id: number
  user_id: number
  created_at: EpochMs
}
export interface StoryReactionsTable {
  story_id: number
  user_id: number
  reaction: string
  created_at: EpochMs
}
export interface StoryAllowedUsersTable {
  story_id: number
  user_id: number
}

// chats module: the user's own placement of chats
export interface PinnedChatsTable {
  user_id: number
  chat_id: number
  pinned_at: EpochMs
}
export interface ArchivedChatsTable {
  user_id: number
  chat_id: number
  archived_at: EpochMs
}

// polls module
export interface PollsTable {
  id: Generated<number>
  chat_id: number
  creator_id: number
  question: string
  /** the options' texts, in order */
  options: unknown
  is_multiple: Generated<Flag>
  is_anonymous: Generated<Flag>
  closed_at: EpochMs | null
  created_at: EpochMs
}
export type PollRow = Selectable<PollsTable>
export interface PollVotesTable {
  poll_id: number
  user_id: number
  option_index: number
  created_at: EpochMs
}

// music module
export interface UserMusicTable {
  id: Generated<number>
  user_id: number
  /** the upload's path (served at /uploads/{path}) */
  file_path: string
  file_name: string
  artist: string
  title: string
  duration: number | null
  source_message_id: number | null
  added_at: EpochMs
}
export type UserMusicRow = Selectable<UserMusicTable>

// search module
export interface RecentSearchesTable {
  id: Generated<number>
  user_id: number
  search_query: string
  search_type: string
  created_at: EpochMs
}

// referrals module
export interface ReferralsTable {
  id: Generated<number>
  inviter_id: number
  invited_user_id: number
  created_at: EpochMs
}

/** when a user first had their invite link: only accounts created after it may name them */
export interface ReferralSharesTable {
  user_id: number
  shared_at: EpochMs
}

// premium module
export type OrderStatus = 'pending' | 'paid' | 'failed' | 'refunded'
/** purchase: activate or redeem; renewal: the renewal job; referral: ten invited users */
export type OrderKind = 'purchase' | 'renewal' | 'referral'

export interface PremiumOrdersTable {
  id: Generated<number>
  user_id: number
  plan: string
  /** kopecks */
  amount: number
  currency: string
  status: OrderStatus
  provider: string
  /** the premium_expires_at paying the order took the user to (null until paid) */
  premium_until: EpochMs | null
  created_at: EpochMs
  kind: Generated<OrderKind>
  /** months of premium the order buys (0 for a referral's days) */
  months: Generated<number>
  payment_method: string | null
  promo_id: number | null
  idempotency_key: string | null
  /** the provider's own id of the payment */
  provider_ref: string | null
  paid_at: EpochMs | null
}
export type PremiumOrderRow = Selectable<PremiumOrdersTable>

export interface PremiumSubscriptionsTable {
  user_id: number
  premium_since: EpochMs | null
  plan: string | null
  payment_method: string | null
  auto_renew: Generated<Flag>
  updated_at: EpochMs
}

export interface PremiumPromosTable {
  id: Generated<number>
  code: string
  discount_percent: number
  max_uses: number
  used_count: Generated<number>
  expires_at: EpochMs | null
  is_active: Generated<Flag>
  created_by: number | null
  created_at: EpochMs
}
export type PremiumPromoRow = Selectable<PremiumPromosTable>

export interface PremiumPromoRedemptionsTable {
  promo_id: number
  user_id: number
  order_id: number | null
  created_at: EpochMs
}

// settings module
export interface UserSettingsTable {
  user_id: number
  /** the preferences the user changed (defaults are not stored) */
  settings: unknown
  updated_at: EpochMs
}

// reports module
export type ReportStatus = 'pending' | 'resolved' | 'dismissed'
export interface ReportsTable {
  id: Generated<number>
  reporter_id: number
  reported_user_id: number | null
  reported_message_id: number | null
  /** `user:<id>` or `message:<id>` */
  target: string
  reason: string
  status: Generated<ReportStatus>
  created_at: EpochMs
  resolved_at: EpochMs | null
  resolved_by: number | null
  /** the moderator's note on the resolution */
  resolution_note: string | null
}
export type ReportRow = Selectable<ReportsTable>

// jobs runner
export interface JobLeasesTable {
  name: string
  holder: string | null
  expires_at: EpochMs
  last_run_at: EpochMs
}
export interface JobRunsTable {
  name: string
  instance: string
  scope: string
  every_ms: number
  runs: number
  failures: number
  last_started_at: EpochMs | null
  last_finished_at: EpochMs | null
  last_duration_ms: number | null
  last_error: string | null
  last_error_at: EpochMs | null
  updated_at: EpochMs
}
export type JobRunRow = Selectable<JobRunsTable>

// push module
export type PushKind = 'webpush' | 'fcm' | 'apns'
export interface PushSubscriptionsTable {
  id: Generated<number>
  user_id: number
  /** the session that registered it: it goes away with the session */
  session_id: number
  kind: PushKind
  /** the Web Push endpoint URL, or the native token */
  endpoint: string
  /** Web Push only: the subscription's keys (base64url) */
  p256dh: string | null
  auth: string | null
  created_at: EpochMs
  updated_at: EpochMs
}
export type PushSubscriptionRow = Selectable<PushSubscriptionsTable>
/** `call`: a ringing call; its row's chat_id is minus the call id, message_id the call id */
export type PushNotificationKind = 'message' | 'mention' | 'reply' | 'call'
/** The one durable queue of due work (jobs/queue.ts): scheduled messages, pushes, webhook lanes, broadcasts. */
export interface WorkQueueTable {
  id: Generated<number>
  kind: string
  /** the item's identity within its kind (a scheduled message's id, `user:chat` of a push, `bot:chat_key` of a webhook lane) */
  item_key: string
  due_at: EpochMs
  /** when its current work began (an age limit counts from here) */
  since: EpochMs
  attempts: Generated<number>
  /** moved by each write that adds to the item while it may be claimed */
  revision: Generated<number>
  /** the row it stands for: a scheduled message, a push's newest message, a lane's head delivery */
  ref: number | null
  count: Generated<number>
  /** a kind's own detail (a push: its notification kind) */
  data: string | null
  claimed_by: string | null
  claimed_until: EpochMs | null
  last_error: string | null
  created_at: EpochMs
}
export type WorkQueueRow = Selectable<WorkQueueTable>

// bots module
export interface BotAppsTable {
  /** the bot's user id (users.is_bot = 1) */
  bot_id: number
  owner_id: number
  name: string
  description: Generated<string>
  /** JSON array of command names users may send beside the defined ones */
  allowed_commands: unknown
  /** SHA-256 of the token `<bot_id>:<secret>` */
  token_hash: string
  /** the last update id handed out */
  last_update_id: Generated<number>
  /** getUpdates' allowed_updates (JSON array), null for the default set */
  allowed_updates: unknown | null
  created_at: EpochMs
  updated_at: EpochMs
}
export type BotAppRow = Selectable<BotAppsTable>
export interface BotCommandsTable {
  bot_id: number
  command: string
  description: string
  handler: string | null
  /** getMyCommands' order */
  position: Generated<number>
  created_at: EpochMs
  updated_at: EpochMs
}
export type BotCommandRow = Selectable<BotCommandsTable>
export interface BotUpdatesTable {
  bot_id: number
  update_id: number
  kind: string
  message_id: number | null
  /** the Telegram Update without its update_id (JSON) */
  payload: unknown
  created_at: EpochMs
}
export type BotUpdateRow = Selectable<BotUpdatesTable>
export interface BotWebhooksTable {
  bot_id: number
  url: string
  /** `whsec_<base64>`, the Standard Webhooks signing key */
  secret: string
  /** setWebhook's secret_token (X-Telegram-Bot-Api-Secret-Token), null: none */
  secret_token: string | null
  is_active: Generated<Flag>
  verified_at: EpochMs | null
  last_error_at: EpochMs | null
  last_error_message: string | null
  created_at: EpochMs
  updated_at: EpochMs
}
export type BotWebhookRow = Selectable<BotWebhooksTable>
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed'
export interface BotWebhookDeliveriesTable {
  id: Generated<number>
  bot_id: number
  /** deliveries with one key go out in id order, one at a time */
  chat_key: string
  kind: 'update' | 'custom'
  update_id: number | null
  /** the JSON body posted */
  payload: unknown
  status: WebhookDeliveryStatus
  attempts: Generated<number>
  next_attempt_at: EpochMs
  last_status_code: number | null
  last_error: string | null
  created_at: EpochMs
  delivered_at: EpochMs | null
}
export type BotWebhookDeliveryRow = Selectable<BotWebhookDeliveriesTable>
export interface BotMessageMarkupTable {
  message_id: number
  bot_id: number
  /** the Telegram reply_markup (JSON) */
  reply_markup: unknown
}
/** A press of a bot's inline keyboard button, until the bot answers it (answerCallbackQuery). */
export interface BotCallbackQueriesTable {
  id: string
  bot_id: number
  user_id: number
  message_id: number
  chat_id: number
  data: string
  answered_at: EpochMs | null
  created_at: EpochMs
}

// auth module: QR login
export type QrLoginStatus = 'pending' | 'scanned' | 'authorized' | 'used'
export interface QrLoginTokensTable {
  id: Generated<number>
  /** SHA-256 of the token */
  token_hash: string
  /** SHA-256 of the secret only the generating device holds (status and login need it); null on codes made before it existed */
  secret_hash: string | null
  status: Generated<QrLoginStatus>
  /** the device that asked to sign in: its own words, address and user agent */
  device: string | null
  ip_address: string | null
  user_agent: string | null
  /** who scanned it (step request) */
  user_id: number | null
  /** the session that approved it (step authorize) */
  authorized_session_id: number | null
  /** the approving session was finished by a second factor */
  two_factor_verified: Generated<Flag>
  expires_at: EpochMs
  scanned_at: EpochMs | null
  authorized_at: EpochMs | null
  used_at: EpochMs | null
  created_at: EpochMs
}
export type QrLoginTokenRow = Selectable<QrLoginTokensTable>

// auth module: OpenID Connect identities
export interface IdentityProviderAccountsTable {
  id: Generated<number>
  /** the provider's id in OAUTH_PROVIDERS */
  provider: string
  /** the provider's `sub` claim; unique with provider */
  subject: string
  user_id: number
  /** the email the provider gave when the identity was first seen */
  email: string | null
  created_at: EpochMs
  last_login_at: EpochMs | null
}
export type IdentityProviderAccountRow = Selectable<IdentityProviderAccountsTable>

// calls module
export type CallType = 'audio' | 'video'
export type CallStatus = 'ringing' | 'answered' | 'ended' | 'missed' | 'declined' | 'cancelled'
export interface CallsTable {
  id: Generated<number>
  caller_id: number
  receiver_id: number
  call_type: CallType
  status: CallStatus
  created_at: EpochMs
  answered_at: EpochMs | null
  ended_at: EpochMs | null
  /** seconds from answer to end */
  duration: number | null
}
export type CallRow = Selectable<CallsTable>
export type VideoCallStatus = 'active' | 'ended'
export interface VideoCallsTable {
  id: Generated<number>
  room_id: string
  creator_id: number
  /** the 1:1 call this is the room of */
  call_id: number | null
  call_type: CallType
  status: VideoCallStatus
  started_at: EpochMs
  ended_at: EpochMs | null
  /** seconds from start to end */
  duration: number | null
  participant_count: Generated<number>
  last_activity_at: EpochMs
}
export type VideoCallRow = Selectable<VideoCallsTable>
export interface VideoCallParticipantsTable {
  call_id: number
  user_id: number
  joined_at: EpochMs
  left_at: EpochMs | null
  audio_only: Generated<Flag>
  screensharing: Generated<Flag>
  /** signaling sockets of the user in the room now */
  connections: Generated<number>
}
export type VideoCallParticipantRow = Selectable<VideoCallParticipantsTable>
/** a signaling socket of a participant in a room now, by the video service's peer id */
export interface VideoCallPeersTable {
  call_id: number
  peer_id: string
  user_id: number
}
export interface RtcSettingsTable {
  id: Generated<number>
  user_id: number
  stun_server: string | null
  stun_port: number | null
  turn_server: string | null
  turn_port: number | null
  turn_username: string | null
  turn_credential: string | null
  enabled: Generated<Flag>
  updated_at: EpochMs
}
export type RtcSettingsRow = Selectable<RtcSettingsTable>

export interface Database {
  users: UsersTable
  user_sessions: UserSessionsTable
  mod_logs: ModLogsTable
  chats: ChatsTable
  chat_members: ChatMembersTable
  member_buckets: MemberBucketsTable
  chat_events: ChatEventsTable
  invite_links: InviteLinksTable
  group_topics: GroupTopicsTable
  channel_binds: ChannelBindsTable
  messages: MessagesTable
  message_hidden: MessageHiddenTable
  reactions: ReactionsTable
  saved_messages: SavedMessagesTable
  scheduled_messages: ScheduledMessagesTable
  blocked_users: BlockedUsersTable
  update_seqs: UpdateSeqsTable
  updates: UpdatesTable
  recent_updates: RecentUpdatesTable
  file_objects: FileObjectsTable
  file_uploads: FileUploadsTable
  upload_sessions: UploadSessionsTable
  contacts: ContactsTable
  stories: StoriesTable
  story_views: StoryViewsTable
  story_likes: StoryLikesTable
  story_reactions: StoryReactionsTable
  story_allowed_users: StoryAllowedUsersTable
  pinned_chats: PinnedChatsTable
  polls: PollsTable
  referrals: ReferralsTable
  referral_shares: ReferralSharesTable
  premium_orders: PremiumOrdersTable
  premium_subscriptions: PremiumSubscriptionsTable
  premium_promos: PremiumPromosTable
  premium_promo_redemptions: PremiumPromoRedemptionsTable
  recent_searches: RecentSearchesTable
  user_music: UserMusicTable
  poll_votes: PollVotesTable
  archived_chats: ArchivedChatsTable
  user_settings: UserSettingsTable
  reports: ReportsTable
  job_leases: JobLeasesTable
  job_runs: JobRunsTable
  two_factor_recovery_codes: TwoFactorRecoveryCodesTable
  login_tickets: LoginTicketsTable
  login_codes: LoginCodesTable
  email_verifications: EmailVerificationsTable
  account_codes: AccountCodesTable
  username_reservations: UsernameReservationsTable
  broadcasts: BroadcastsTable
  platform_counters: PlatformCountersTable
  daily_counters: DailyCountersTable
  push_subscriptions: PushSubscriptionsTable
  work_queue: WorkQueueTable
  bot_apps: BotAppsTable
  bot_commands: BotCommandsTable
  bot_webhooks: BotWebhooksTable
  bot_webhook_deliveries: BotWebhookDeliveriesTable
  bot_updates: BotUpdatesTable
  bot_message_markup: BotMessageMarkupTable
  bot_callback_queries: BotCallbackQueriesTable
  qr_login_tokens: QrLoginTokensTable
  identity_provider_accounts: IdentityProviderAccountsTable
  calls: CallsTable
  video_calls: VideoCallsTable
  video_call_participants: VideoCallParticipantsTable
  video_call_peers: VideoCallPeersTable
  rtc_settings: RtcSettingsTable
}
