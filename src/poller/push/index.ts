/** Push (`docs/push.md`): audited SSE streams, their gaps, and the liveness checks they answer for. */
export { pollerPush, pushCheck, type PushCheckHost } from './push-check.js';
export { PushKeeper, type PushKeeperOptions, type PushStats } from './push-keeper.js';
export { defaultPushPolicy, type PushPolicy } from './push-policy.js';
export { judgeAudit, judgeStall, streamContactAt, type AuditReading, type PushGap, type PushNode, type PushStatus } from './push-node.js';
