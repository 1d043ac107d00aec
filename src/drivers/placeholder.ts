/**
 * Vendor placeholders: what a BMC, a FRU or a tool prints where it has no value (`N/A`, `Not Available`, `-`,
 * `To Be Filled By O.E.M.`, `Default string`, a blank, a serial of zeros). Every string a driver reads into inventory
 * goes through `presentText`, so a placeholder is absent everywhere, never a vendor, a model or a serial number: one
 * placeholder serial taken as a value would make every such node the same machine, and would show as drift the day
 * the field is programmed.
 *
 * Two strengths: `text` for any field (names, models, vendors, versions), and `identity` for fields that identify one
 * unit (serials, part numbers, SKUs, asset tags), where a value of only zeros, only `F`s or only `X`s is a blank
 * EEPROM, not a unit.
 */

export type PlaceholderKind = 'text' | 'identity';

/**
 * Whole values, compared without case, spaces and final dots. SMBIOS defaults as AMI and Insyde ship them, IPMI FRU
 * defaults, and what Redfish services print for an unknown value.
 */
const PLACEHOLDER_WORDS = new Set(
  [
    'n/a',
    'na',
    'n.a',
    'n/a n/a',
    '[n/a]',
    '<n/a>',
    'not available',
    'not applicable',
    'not specified',
    'not set',
    'not present',
    'not supported',
    'unknown',
    'unspecified',
    'undefined',
    'null',
    'nil',
    'none',
    'empty',
    'invalid',
    'to be filled by o.e.m',
    'to be filled by oem',
    'default string',
    'default',
    'o.e.m',
    'oem',
    'system manufacturer',
    'system product name',
    'system version',
    'system serial number',
    'system sku',
    'sku',
    'chassis manufacturer',
    'chassis version',
    'chassis serial number',
    'base board serial number',
    'base board product name',
    'board serial number',
    'serial number',
    'part number',
    'asset tag',
    'type1productconfigid',
    'type2 - board serial number',
    'type2 - board product name1',
    'type2 - board vendor name1',
    'type2 - board asset tag',
    'type1 - sku',
    '0123456789',
    '123456789',
    '1234567890',
    'none provided',
  ],
);

/** Only punctuation (`-`, `--`, `-*`, `*`, `?`, `...`, `_`), or nothing but spaces. */
const PUNCTUATION_ONLY = /^[\s\-*_.?#/\\|~]*$/;

/** A blank EEPROM or a counter never set: zeros, `F`s or `X`s, in any grouping (`0000000`, `00:00:00`, `FFFF-FFFF`). */
const BLANK_IDENTITY = /^(?:[0\s:.\-_]+|[fF\s:.\-_]{4,}|[xX\s:.\-_]+)$/;

/** The form a value is compared in: lower case, inner spaces collapsed, final dots and spaces dropped. */
function comparable(value: string): string {
  return value.trim().replace(/\s+/g, ' ').replace(/[.\s]+$/, '').toLowerCase();
}

/** True when `value` is a vendor's way of saying there is no value. */
export function isPlaceholder(value: string, kind: PlaceholderKind = 'text'): boolean {
  if (PUNCTUATION_ONLY.test(value)) return true;
  if (PLACEHOLDER_WORDS.has(comparable(value))) return true;
  return kind === 'identity' && BLANK_IDENTITY.test(value.trim());
}

/** The value trimmed, or undefined when it is absent, blank or a placeholder. */
export function presentText(value: string | undefined | null, kind: PlaceholderKind = 'text'): string | undefined {
  if (value === undefined || value === null) return undefined;
  const trimmed = value.trim();
  return isPlaceholder(trimmed, kind) ? undefined : trimmed;
}

/** The Redfish properties (and their like elsewhere) that identify one unit: zero-filled values are blanks there. */
export const IDENTITY_KEYS: ReadonlySet<string> = new Set(['SerialNumber', 'SKU', 'PartNumber', 'SparePartNumber', 'AssetTag', 'ServiceTag']);

/** The kind of a Redfish property by its key. */
export function placeholderKindOf(key: string): PlaceholderKind {
  return IDENTITY_KEYS.has(key) ? 'identity' : 'text';
}
