export type { ClaimGate } from '../claim/claimer.js';
export { BURST_MS, RateLimits } from './rate-gate.js';
export { formatRate, MAX_RATE_PER_SECOND, parseRate, type Rate } from './rate-spec.js';
export {
  LIMITS_ROOT,
  limitNodeName,
  limitsPath,
  listRateLimits,
  type RateLimit,
  removeRateLimit,
  setRateLimit,
} from './rate-store.js';
