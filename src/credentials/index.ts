/** Versioned credentials: the store interface a secret manager implements, the file store, and the password generator. */
export * from './credential-store.js';
export * from './file-credential-store.js';
export * from './in-force.js';
