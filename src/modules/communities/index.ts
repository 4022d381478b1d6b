/** The communities module's public surface: what other modules may use. */
export { addMember, assertMay, chatView, create, createInvite, edit, findInvite, findView, inviteByCode, inviteLink, join, leave, leaveOwnedChats, listInvites, markVerified, memberPage, removeMember, revokeInvite, roleOf, setAdmin, staff, transfer, view } from './service.js'
export type { ChatView } from './service.js'
