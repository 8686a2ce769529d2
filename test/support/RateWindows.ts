/**
 * Rate limits count in calendar windows aligned on the Unix epoch (a minute
 * from :00 to :00, a day from 00:00 UTC). A test that counts down a window must
 * not straddle its end, or the count starts over halfway through.
 */

export const MINUTE = 60_000
export const DAY = 86_400_000

/** Unix milliseconds when the calendar window of this length that `at` falls in ends. */
export const windowEnd = (at: number, length: number = MINUTE) => (Math.floor(at / length) + 1) * length

/** Wait, if need be, until the current window of this length has at least `needMillis` left. */
export const roomInWindow = async (needMillis: number, length: number = MINUTE): Promise<void> => {
  const left = windowEnd(Date.now(), length) - Date.now()
  if (left < needMillis) await new Promise((resolve) => setTimeout(resolve, left + 50))
}
