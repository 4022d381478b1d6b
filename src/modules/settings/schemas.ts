import { Type } from 'typebox'

export const SettingsView = Type.Object({ user_id: Type.Integer(), settings: Type.Record(Type.String(), Type.Unknown()) })

export const UpdateBody = Type.Object(
  {
    key: Type.String({
      pattern: '^[A-Za-z][A-Za-z0-9_.-]{0,63}$',
      errorMessage: 'key must be 1 to 64 letters, digits, _ . or -, starting with a letter',
    }),
    /** any JSON value; null resets the key */
    value: Type.Unknown(),
  },
  { additionalProperties: false, required: ['key', 'value'] },
)
