/**
 * Time travel over the read models: points (positions or instants) resolved, questions answered from the versioned
 * read models as of a position, rollouts folded up to a point.
 */
export { AsOfEngine, type AsOfOptions } from './as-of-engine.js';
export { AsOfError, asOfErrorCatalogue, isAsOfError, isPointError, type AnyAsOfError, type AsOfErrorCode, type AsOfErrorDetails } from './as-of-error.js';
export { asOfDescription, parsePoint, type AsOfPoint, type PointQuestion } from './as-of-point.js';
