/**
 * The centre's own answers when it cannot pass an intent to a site: one catalogue, each code with its HTTP status,
 * whether a retry can succeed, and its meaning (docs/architecture.md, "Intents through the centre", mirrors it; a test
 * checks both agree). What a site answers is passed through as the site said it, with the site named.
 */
export interface CentreErrorDetails {
  /** The site is partitioned, or did not answer: nothing was recorded unless `ambiguous` (a retry with the same key is safe either way). */
  CENTRE_SITE_UNREACHABLE: { site: string; state: string; asOf: string | null; reason: string; ambiguous: boolean; idempotencyKey: string };
  /** The site's log was refused by the centre (rewritten or forked): the centre forwards nothing to it. */
  CENTRE_SITE_REFUSED: { site: string };
  /** The site's card gave the centre no API to forward to. */
  CENTRE_SITE_NO_DOOR: { site: string };
  /** No federated site holds the node (or alarm, or rollout) in the read models the centre has applied. */
  CENTRE_NOT_FOUND: { resource: string; id: string };
  /** The request to the centre is invalid (`field` names it); nothing was forwarded. */
  CENTRE_INVALID_REQUEST: { field: string; reason: string };
  /** A fleet rollout already exists under this id with another request. */
  CENTRE_CONFLICT: { resource: string; id: string; reason: string };
}

export type CentreErrorCode = keyof CentreErrorDetails;

export const centreErrorCatalogue: Record<CentreErrorCode, { status: number; retryable: boolean; meaning: string }> = {
  CENTRE_SITE_UNREACHABLE: {
    status: 503,
    retryable: true,
    meaning: 'the site is partitioned or did not answer in time; retry with the same Idempotency-Key (`details.idempotencyKey`) once it is live: the site records the intent once',
  },
  CENTRE_SITE_REFUSED: { status: 409, retryable: false, meaning: "the centre refused the site's log (rewritten or forked): act on the site itself" },
  CENTRE_SITE_NO_DOOR: { status: 503, retryable: false, meaning: "the site's card names no API for the centre to forward to (start the site with --site and give the centre its new card)" },
  CENTRE_NOT_FOUND: { status: 404, retryable: false, meaning: 'no federated site holds that node, alarm or fleet rollout (as far as the centre has applied their logs)' },
  CENTRE_INVALID_REQUEST: { status: 400, retryable: false, meaning: 'a parameter of the request to the centre is invalid (`details.field`); nothing was forwarded' },
  CENTRE_CONFLICT: { status: 409, retryable: false, meaning: 'a fleet rollout with that id was planned with another request' },
};

/** An answer of the centre's own: a stable code, its status from the catalogue, typed details. */
export class CentreError<C extends CentreErrorCode = CentreErrorCode> extends Error {
  override readonly name = 'CentreError';
  readonly status: number;
  readonly retryable: boolean;

  constructor(
    readonly code: C,
    readonly details: CentreErrorDetails[C],
    message: string,
  ) {
    super(message);
    this.status = centreErrorCatalogue[code].status;
    this.retryable = centreErrorCatalogue[code].retryable;
  }
}
