/** Signed notes (the C2SP signed-note format) and the checkpoints written in them. */
export * from './signed-note.js';
