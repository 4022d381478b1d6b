/** The chats module's public surface: what other modules may use. */
export { Topic } from './schemas.js'
export { advanceRead, afterMessage, assertTopic, countGroups, findChat, findPersonal, getOrCreatePersonal, lockChat, nextMessageSeq, otherMember, personalIn, personalPeer, personalPeers, readSeqOf, refreshLastMessage, requireMember, requireReader, unreadCount } from './service.js'
export type { MemberChat } from './service.js'
