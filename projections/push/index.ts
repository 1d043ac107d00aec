export { evolveNodePushState, initialNodePushState, nodePushState, type NodePushEvent, type NodePushGap, type NodePushState } from './node-push-state.js';
