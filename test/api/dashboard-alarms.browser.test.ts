/**
 * The dashboard's open alarms as an operator sees them: critical ones first and in full, however many warnings were
 * raised before them (a dozen drift warnings once pushed the critical ones to the bottom of a 360 px scroll box, cut in half).
 * Against the real dashboard in headless Chromium, with the operator token alone.
 */
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { systemTools } from '../support/system-tool.js';
import { fleetProjections } from '../../projections/index.js';
import { buildApi, type ZodApp } from '../../src/api/index.js';
import { EventStore, ProjectionRunner } from '../../src/ledger/index.js';
import { freshDatabase } from '../support/backends.js';
import { declared, inventory, registered, xid } from '../projections/support/fleet-events.js';
import { tokens, tokenTable } from './support/api-harness.js';

const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const browserTools = systemTools([chromiumPath], 'apt-get install chromium');

describe.skipIf(!browserTools.runnable)(browserTools.title('the dashboard\'s open alarms'), () => {
  let drop: () => Promise<void>;
  let store: EventStore;
  let runner: ProjectionRunner;
  let app: ZodApp;
  let browser: Browser;
  let base: string;
  const drifting = Array.from({ length: 12 }, (_, i) => `dc1-r01-n${String(i + 1).padStart(2, '0')}`);
  // More critical alarms than the old 360 px box held, so ordering alone would not show them all.
  const failingGpus = Array.from({ length: 16 }, (_, i) => `dc1-r02-n${String(i + 1).padStart(2, '0')}`);

  beforeAll(async () => {
    browserTools.require();
    const database = await freshDatabase(inject('embeddedAdminUrl'));
    drop = database.drop;
    store = await EventStore.open({ connectionString: database.url, pollIntervalMs: 100 });
    runner = new ProjectionRunner(store, fleetProjections(), { batchSize: 500 });
    await runner.start();
    // Given a dozen drift warnings (each node reports another serial than the EBOM declares) ...
    for (const nodeId of drifting) {
      await store.append(`node-${nodeId}`, [registered(nodeId, 'r01'), declared({ nodeId, rack: 'r01' }), inventory({ manufacturer: 'HPE', model: 'ProLiant DL380 Gen10 Plus', serial: `OTHER-${nodeId}` }, 10)]);
    }
    // ... and then sixteen critical alarms (a GPU fell off the bus on each of sixteen nodes).
    for (const nodeId of failingGpus) await store.append(`node-${nodeId}`, [registered(nodeId, 'r02'), xid(79, 'critical', 20)]);
    const head = (await store.head()).position;
    for (let attempt = 0; attempt < 600 && !(await runner.status()).every((s) => s.position >= head && s.state === 'running'); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    app = await buildApi({ store, runner, tokens: tokenTable });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await runner?.stop();
    await store?.close();
    await drop?.();
  });

  it('critical alarms come first and are shown in full after a dozen warnings, on the operator token alone', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(`${base}/?token=${tokens.operator}`);
    await page.waitForFunction(() => document.querySelectorAll('#alarms li:has(> .severity.critical)').length === 16, undefined, { timeout: 15_000 });

    const layout = await page.evaluate(() => {
      const list = document.getElementById('alarms')!;
      list.scrollIntoView();
      const box = list.getBoundingClientRect();
      const items = [...list.querySelectorAll<HTMLElement>('li:has(> .severity)')].map((item) => ({ severity: item.querySelector('.severity')!.textContent!, text: item.textContent ?? '', rect: item.getBoundingClientRect().toJSON() as DOMRect }));
      // Where a critical alarm ends up on screen: inside every scrolling box around it, not cut by any.
      const clipped = (item: Element): boolean => {
        const rect = item.getBoundingClientRect();
        for (let box = item.parentElement; box; box = box.parentElement) {
          const style = getComputedStyle(box);
          if (!/(auto|scroll|hidden)/.test(style.overflowY)) continue;
          const outer = box.getBoundingClientRect();
          if (rect.top < outer.top - 0.5 || rect.bottom > outer.bottom + 0.5) return true;
        }
        return false;
      };
      return {
        box: box.toJSON() as DOMRect,
        items,
        criticalClipped: [...list.querySelectorAll('li:has(> .severity.critical)')].map(clipped),
        criticalVisible: [...list.querySelectorAll('li:has(> .severity.critical)')].map((item) => {
          const rect = item.getBoundingClientRect();
          return rect.height > 0 && rect.top >= 0 && rect.bottom <= window.innerHeight;
        }),
      };
    });
    // The API lists them in that order too (what `fleet-ledger alarms list` prints).
    const listed = (await (await fetch(`${base}/v1/alarms`, { headers: { authorization: `Bearer ${tokens.operator}` } })).json()) as { items: Array<{ severity: string }> };
    expect(listed.items.map((alarm) => alarm.severity)).toEqual([...failingGpus.map(() => 'critical'), ...drifting.map(() => 'warning')]);
    // Ordered by severity: every critical alarm before any warning.
    expect(layout.items.map((item) => item.severity)).toEqual([...failingGpus.map(() => 'critical'), ...drifting.map(() => 'warning')]);
    expect(layout.items.slice(0, failingGpus.length).map((item) => /dc1-r0\d-n\d\d/.exec(item.text)?.[0]).sort()).toEqual(failingGpus);
    // Shown: no scroll box cuts a critical alarm, and all are on screen once the list is.
    expect(layout.criticalClipped).toEqual(failingGpus.map(() => false));
    expect(layout.criticalVisible).toEqual(failingGpus.map(() => true));
    // The warnings are one line away, every one of them.
    await page.click('#alarms li[data-kind="lower-severity"] summary');
    expect(await page.locator('#alarms ul.others li:has(> .severity.warning)').count()).toBe(drifting.length);
    // Each alarm shows its id, which `fleet-ledger alarms ack` takes.
    expect(await page.textContent('#alarms li:has(> .severity.critical) .alarm-id')).toMatch(/^xid:dc1-r02-n\d\d:/);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
