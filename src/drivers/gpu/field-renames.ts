/**
 * Where each nvidia-smi value is printed, per driver generation, in each of its three formats (`-q -x`, `-q`,
 * `--query-gpu` CSV). nvidia-smi renames fields between generations and leaves the old name printing `N/A` (or drops
 * it): a parser that knows one name loses the value on the next driver. Each list is in order of preference; a
 * parser takes the first candidate that holds a value (a non-value such as `N/A` is no value, and the next is tried).
 *
 * Board power:
 * - up to 525: `<power_readings><power_draw>`, `Power Readings / Power Draw`, `power.draw`;
 * - 530 to 565: the section became `<gpu_power_readings>` / `GPU Power Readings` (with `<module_power_readings>`
 *   beside it on Grace Hopper); `power_draw` still there, `average_power_draw` and `instant_power_draw` added beside
 *   it (`power.draw.average`, `power.draw.instant`);
 * - 570 to 595: `power_draw` is gone or `N/A`; only `average_power_draw` and `instant_power_draw` carry the watts
 *   (`Average Power Draw`, `Instantaneous Power Draw`).
 * `power_draw` was itself a one-second average on Ampere and newer, so the average is preferred to the instant.
 */

/** A value's place: an element path under `<gpu>` (`-q -x`), a section and key path (`-q`), a CSV field. */
export interface FieldPlaces {
  xml: ReadonlyArray<readonly string[]>;
  query: ReadonlyArray<readonly string[]>;
  csv: readonly string[];
}

export const powerDrawPlaces: FieldPlaces = {
  xml: [
    ['gpu_power_readings', 'power_draw'],
    ['gpu_power_readings', 'average_power_draw'],
    ['gpu_power_readings', 'instant_power_draw'],
    ['power_readings', 'power_draw'],
    ['power_readings', 'average_power_draw'],
    ['power_readings', 'instant_power_draw'],
  ],
  query: [
    ['GPU Power Readings', 'Power Draw'],
    ['GPU Power Readings', 'Average Power Draw'],
    ['GPU Power Readings', 'Instantaneous Power Draw'],
    ['GPU Power Readings', 'Instant Power Draw'],
    ['Power Readings', 'Power Draw'],
    ['Power Readings', 'Average Power Draw'],
    ['Power Readings', 'Instantaneous Power Draw'],
  ],
  csv: ['power.draw', 'power.draw.average', 'power.draw.instant'],
};

/**
 * Clock event reasons: `clocks_throttle_reasons` / `Clocks Throttle Reasons` up to 530, renamed `clocks_event_reasons`
 * / `Clocks Event Reasons` around 535 (the CSV fields `clocks_throttle_reasons.*` likewise, read as one name by
 * `canonicalFieldName`). Both sections are read; a report has one.
 */
export const clockEventReasonSections = {
  xml: ['clocks_event_reasons', 'clocks_throttle_reasons'],
  query: ['Clocks Event Reasons', 'Clocks Throttle Reasons'],
} as const;

/** The first candidate whose reading is a value (`read` gives undefined for an absent place or a non-value). */
export function firstReading<P, V>(places: readonly P[], read: (place: P) => V | undefined): V | undefined {
  for (const place of places) {
    const value = read(place);
    if (value !== undefined) return value;
  }
  return undefined;
}
