/**
 * Whether a BMC's refusal of an update request is permanent: the same request would be refused again, so it is
 * never retried (retrying only spends the BMC's time and the operator's patience).
 *
 * Permanent means the BMC says the request itself is wrong: a 4xx (other than the ones that mean "not now" or "not
 * you": 401, 403, 408, 409, 423, 425, 429) whose Redfish error body either carries a message id about a bad parameter
 * or a missing resource (`Base.1.8.ActionParameterValueFormatError`, `ResourceNotFound`, ...) or names the image (its
 * URI or file name). A 400 with a generic body and no word about the image (as some BMCs answer while they boot) is
 * not permanent: it is retried within the budget. Pure, so the verdict is recorded with its evidence and replayed.
 */

/** Message ids (their last segment) that say the request's parameters or target are wrong, not that the BMC is busy. */
const permanentMessageIds = new Set([
  'ActionParameterValueFormatError',
  'ActionParameterValueTypeError',
  'ActionParameterValueError',
  'ActionParameterValueNotInList',
  'ActionParameterValueOutOfRange',
  'ActionParameterUnknown',
  'ActionParameterNotSupported',
  'ActionParameterMissing',
  'ActionNotSupported',
  'PropertyValueFormatError',
  'PropertyValueTypeError',
  'PropertyValueNotInList',
  'PropertyMissing',
  'PropertyUnknown',
  'ResourceNotFound',
  'ResourceMissingAtURI',
  'MalformedJSON',
  'InvalidURI',
  'QueryNotSupported',
  'UnsupportedMediaType',
  // Update registry: the image itself is refused.
  'ImageUnsupported',
  'InvalidImage',
  'ImageCorrupt',
  'VerificationFailed',
  'TransferFailed',
]);

/** 4xx answers that mean "not now" or "not you": never judged permanent from the body. */
const transientStatuses = new Set([401, 403, 408, 409, 423, 425, 429]);

export interface UpdateRefusal {
  status: number | undefined;
  messageIds: readonly string[];
  /** The refusal's text: its messages and the error message. */
  text: string;
}

export function isPermanentRefusal(refusal: UpdateRefusal, imageUri: string): boolean {
  const { status } = refusal;
  if (status === undefined || status < 400 || status >= 500 || transientStatuses.has(status)) return false;
  if (refusal.messageIds.some((id) => permanentMessageIds.has(id.split('.').pop() ?? id))) return true;
  const fileName = imageUri.split(/[/\\]/).pop() ?? '';
  const text = refusal.text;
  return text.includes(imageUri) || (fileName.length >= 3 && text.includes(fileName)) || /\bImageURI\b/.test(text);
}
