/** A command was called with wrong arguments: print the message and the command's usage. */
export class UsageError extends Error {}
