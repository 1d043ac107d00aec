/**
 * nvidia-smi renames fields between driver generations and leaves the old name `N/A` or drops it; the parsers know
 * each value's names per generation (`field-renames.ts`). Board power: `power_draw` up to 565, then (570 to 595)
 * `average_power_draw` and `instant_power_draw` only. The same in the `-q` text and the `--query-gpu` CSV. Reports
 * here are of our own making, in the shapes those drivers print.
 */
import { describe, expect, it } from 'vitest';
import { parseNvidiaSmiCsv, parseNvidiaSmiQuery, parseNvidiaSmiXml } from '../../src/drivers/index.js';

/** One GPU's `-q -x` report, with `readings` inside its power section (named `section`). */
function xml(driver: string, section: string, readings: string): string {
  return [
    '<?xml version="1.0" ?>',
    '<nvidia_smi_log>',
    `  <driver_version>${driver}</driver_version>`,
    '  <attached_gpus>1</attached_gpus>',
    '  <gpu id="00000000:18:00.0">',
    '    <product_name>NVIDIA H100 80GB HBM3</product_name>',
    '    <uuid>GPU-4a1f0c2e-0000-4e6b-9d1d-3c2f6b2e9a10</uuid>',
    '    <temperature><gpu_temp>41 C</gpu_temp></temperature>',
    `    <${section}>`,
    '      <power_state>P0</power_state>',
    readings,
    '      <current_power_limit>700.00 W</current_power_limit>',
    `    </${section}>`,
    '  </gpu>',
    '</nvidia_smi_log>',
  ].join('\n');
}

/** One GPU's `-q` text report, with `readings` under its `GPU Power Readings`. */
function query(driver: string, readings: string[]): string {
  return [
    '==============NVSMI LOG==============',
    '',
    'Timestamp                                 : Mon Dec  7 12:00:00 2026',
    `Driver Version                            : ${driver}`,
    'CUDA Version                              : 12.8',
    '',
    'Attached GPUs                             : 1',
    'GPU 00000000:18:00.0',
    '    Product Name                          : NVIDIA H100 80GB HBM3',
    '    GPU UUID                              : GPU-4a1f0c2e-0000-4e6b-9d1d-3c2f6b2e9a10',
    '    GPU Power Readings',
    ...readings.map((line) => `        ${line}`),
    '        Current Power Limit               : 700.00 W',
    '',
  ].join('\n');
}

describe('nvidia-smi power across driver generations', () => {
  it('-q -x from 570 on: power_draw N/A, the watts in average_power_draw', () => {
    const report = xml('570.124.06', 'gpu_power_readings', '      <power_draw>N/A</power_draw>\n      <average_power_draw>312.45 W</average_power_draw>\n      <instant_power_draw>318.02 W</instant_power_draw>');
    expect(parseNvidiaSmiXml(report).gpus[0]?.powerDrawW).toBe(312.45);
  });

  it('-q -x from 580 on: no power_draw at all, only the instant reading left', () => {
    const report = xml('595.10', 'gpu_power_readings', '      <instant_power_draw>298.7 W</instant_power_draw>');
    const data = parseNvidiaSmiXml(report);
    expect(data.gpus[0]?.powerDrawW).toBe(298.7);
    expect(data.unrecognized).toEqual([]);
  });

  it('-q -x before 530 (power_readings/power_draw) and 535 (gpu_power_readings/power_draw) still read', () => {
    expect(parseNvidiaSmiXml(xml('470.82.01', 'power_readings', '      <power_draw>61.20 W</power_draw>')).gpus[0]?.powerDrawW).toBe(61.2);
    expect(parseNvidiaSmiXml(xml('535.104.05', 'gpu_power_readings', '      <power_draw>75.01 W</power_draw>\n      <average_power_draw>74.00 W</average_power_draw>')).gpus[0]?.powerDrawW).toBe(75.01);
  });

  it('-q text from 580 on: only the instantaneous reading', () => {
    const report = query('580.65.06', ['Power Draw                        : N/A', 'Instantaneous Power Draw          : 287.31 W']);
    expect(parseNvidiaSmiQuery(report).gpus[0]?.powerDrawW).toBe(287.31);
  });

  it('--query-gpu CSV: power.draw [N/A] gives way to power.draw.average, then power.draw.instant', () => {
    const csv = (header: string, row: string) => parseNvidiaSmiCsv(`index, name, ${header}\n0, NVIDIA H100 80GB HBM3, ${row}\n`).gpus[0]?.powerDrawW;
    expect(csv('power.draw [W], power.draw.average [W], power.draw.instant [W]', '[N/A], 305.50 W, 310.00 W')).toBe(305.5);
    expect(csv('power.draw [W], power.draw.instant [W]', '[N/A], 310.00 W')).toBe(310);
    expect(csv('power.draw [W]', '120.40 W')).toBe(120.4);
  });
});
