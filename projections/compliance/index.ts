export * from './compliance-queries.js';
export { compareVersionOrder } from './version-order.js';
