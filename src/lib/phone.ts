/** Phone numbers, normalised to E.164 (libphonenumber-js with full metadata). Pure. */
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max'

/** The longest text taken as a phone number (E.164 is at most 16 characters; room for spaces and dashes). */
export const PHONE_INPUT_MAX = 32

/**
 * `input` as an E.164 number (`+79161234567`), read in `region` when it has no country code;
 * null when it is not a valid number.
 */
export function toE164(input: string, region: CountryCode): string | null {
  if (input.length > PHONE_INPUT_MAX) return null
  const parsed = parsePhoneNumberFromString(input, { defaultCountry: region, extract: false })
  return parsed?.isValid() ? parsed.number : null
}
