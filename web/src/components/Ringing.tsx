/** A call ringing on this device: who calls, Answer (the call page picks it up) and Decline. */
import { describe } from '../api'
import { answerPageFor, decline, ringing } from '../calls'
import { notice } from '../store'

export function Ringing() {
  const call = ringing.value
  if (!call) return null
  const who = call.caller.display_name || call.caller.username
  return (
    <div class="ringing" role="alertdialog" aria-label={`Incoming call from ${who}`} aria-live="assertive">
      <span>
        Incoming {call.call_type === 'audio' ? 'voice' : 'video'} call from <strong>{who}</strong>
      </span>
      <a class="button" href={answerPageFor(call.call_id)}>
        Answer
      </a>
      <button type="button" class="danger" onClick={() => decline(call).catch((error) => (notice.value = describe(error)))}>
        Decline
      </button>
    </div>
  )
}
