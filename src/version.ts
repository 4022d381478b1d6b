/** Tern's version, as the API documents and the status page show it. */
export const VERSION = '0.1.0'
