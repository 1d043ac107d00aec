export * from './inventory-evolve.js';
export { InventoryProjection, inventoryEventTypes } from './inventory-projection.js';
export * from './inventory-queries.js';
export * from './certificate-findings.js';
