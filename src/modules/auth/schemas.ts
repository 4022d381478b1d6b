import { Type, type Static } from 'typebox'
import { Me, Username } from '../../http/schemas.js'

export const RegisterBody = Type.Object(
  {
    username: Username,
    password: Type.String({
      minLength: 8,
      maxLength: 256,
      errorMessage: 'Password must be 8 to 256 characters',
    }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254, errorMessage: 'email must be a valid email address' })),
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
)
export type RegisterBody = Static<typeof RegisterBody>

export const LoginBody = Type.Object(
  {
    login: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
    device: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: false },
)
export type LoginBody = Static<typeof LoginBody>

export const AuthResult = Type.Object({ user: Me, session_token: Type.String() })
export type AuthResult = Static<typeof AuthResult>

export const MessageResult = Type.Object({ message: Type.String() })
