/** The chats module's public surface: what other modules may use. */
export { advanceRead, countGroups, lockChat, nextMessageSeq, personalPeers, readSeqOf, refreshLastMessage, unreadCount } from './repo.js'
export { Topic } from './schemas.js'
export {
  afterMessage,
  assertTopic,
  findChat,
  findPersonal,
  getOrCreatePersonal,
  otherMember,
  personalIn,
  personalPeer,
  requireMember,
  requireReader,
} from './service.js'
export type { MemberChat } from './service.js'
