/** The groups module's public surface: what other modules may use. */
export { visibleInvite } from './present.js'
export { AvatarPath, Description, InviteLink, MemberChange, Title } from './schemas.js'
export { joinByInvite } from './service.js'
