/** The polls module's public surface: what other modules may use. */
export {}
