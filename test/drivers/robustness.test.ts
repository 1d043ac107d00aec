import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  FirmwareInventoryObserved,
  HealthObserved,
  NodeInventoryObserved,
  PowerStateObserved,
  SelEntriesObserved,
  SensorsObserved,
} from '../../events/driver-observations.js';
import { DriverError, RedfishDriver, startMockupServer, type MockupServer } from '../../src/drivers/index.js';
import { profileMockup } from '../support/profile-mockup.js';
import { canonicalJson } from '../../src/ledger/index.js';
import { jsonPlaces } from '../support/json-places.js';

const schemas = {
  NodeInventoryObserved: NodeInventoryObserved.schema,
  FirmwareInventoryObserved: FirmwareInventoryObserved.schema,
  PowerStateObserved: PowerStateObserved.schema,
  HealthObserved: HealthObserved.schema,
  SensorsObserved: SensorsObserved.schema,
  SelEntriesObserved: SelEntriesObserved.schema,
} as const;

/** One damage done to one real response. */
type Mutation =
  | { kind: 'drop-field'; pick: number }
  | { kind: 'retype-field'; pick: number; replacement: unknown }
  | { kind: 'null-field'; pick: number }
  | { kind: 'replace-body'; replacement: unknown }
  | { kind: 'truncate'; at: number }
  | { kind: 'invalid-json'; text: string }
  | { kind: 'huge-string'; pick: number; size: number }
  | { kind: 'status'; status: number }
  | { kind: 'hang' };


function mutate(body: unknown, mutation: Mutation): unknown {
  const fields = jsonPlaces(body);
  const field = 'pick' in mutation && fields.length > 0 ? fields[mutation.pick % fields.length]! : undefined;
  const set = (value: unknown) => {
    if (!field) return;
    if (Array.isArray(field.holder)) field.holder[field.key as number] = value;
    else field.holder[field.key as string] = value;
  };
  switch (mutation.kind) {
    case 'drop-field':
      if (field && Array.isArray(field.holder)) field.holder.splice(field.key as number, 1);
      else if (field) delete (field.holder as Record<string, unknown>)[field.key as string];
      return body;
    case 'retype-field':
      set(mutation.replacement);
      return body;
    case 'null-field':
      set(null);
      return body;
    case 'huge-string':
      set('x'.repeat(mutation.size));
      return body;
    case 'replace-body':
      return mutation.replacement;
    default:
      return body;
  }
}

const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop-field' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('retype-field' as const), pick: fc.nat(), replacement: fc.oneof(fc.integer(), fc.string(), fc.constantFrom('PowerEdge\u0000\u0000', '\uD800', 'x\uDFFF'), fc.boolean(), fc.constant([]), fc.constant({}), fc.array(fc.integer(), { maxLength: 3 }), fc.double()) }),
  fc.record({ kind: fc.constant('null-field' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('replace-body' as const), replacement: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('invalid-json' as const), text: fc.constantFrom('', '{', '{"Members": [', 'null', '<html>503 Service Unavailable</html>', '{"@odata.id": }', '\u0000\u0001') }),
  fc.record({ kind: fc.constant('huge-string' as const), pick: fc.nat(), size: fc.constantFrom(100_000, 600_000) }),
  fc.record({ kind: fc.constant('status' as const), status: fc.constantFrom(400, 401, 403, 404, 405, 409, 429, 500, 502, 503) }),
  fc.constant({ kind: 'hang' as const }),
);

describe('robustness of the Redfish driver against damaged answers', () => {
  let server: MockupServer;
  let paths: string[] = [];
  let current: { path: string; mutation: Mutation } | undefined;
  const bodies = new Map<string, string>();

  beforeAll(async () => {
    const seen = new Set<string>();
    server = await startMockupServer({
      folder: profileMockup('nvidia_dpu'),
      fault: ({ method, path }) => {
        if (method === 'GET') seen.add(path);
        if (!current || method !== 'GET' || path !== current.path) return undefined;
        const { mutation } = current;
        if (mutation.kind === 'status') return { kind: 'status', status: mutation.status };
        if (mutation.kind === 'hang') return { kind: 'hang' };
        if (mutation.kind === 'invalid-json') return { kind: 'raw', text: mutation.text };
        if (mutation.kind === 'truncate') {
          const text = bodies.get(path) ?? '';
          return { kind: 'raw', text: text.slice(0, mutation.at % Math.max(1, text.length)) };
        }
        return undefined;
      },
      transform: (path, body) => {
        bodies.set(path, JSON.stringify(body));
        return current && current.path === path ? mutate(body, current.mutation) : body;
      },
    });
    // A clean read first: it lists the resources the driver asks for, which are what gets damaged.
    const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin' });
    await driver.observe();
    await driver.close();
    paths = [...seen].sort();
  });
  afterAll(async () => {
    await server.close();
  });

  it('any truncation or mutation of a real response gives valid observations or a typed driver error, never a hang', async () => {
    expect(paths.length).toBeGreaterThan(20);
    await fc.assert(
      fc.asyncProperty(fc.nat(), mutationArbitrary, async (pick, mutation) => {
        current = { path: paths[pick % paths.length]!, mutation };
        const driver = new RedfishDriver({ baseUrl: server.url, username: 'root', password: 'calvin', requestTimeoutMs: 200, maxConcurrency: 4 });
        const started = Date.now();
        try {
          const observations = await driver.observe();
          // Damage never inflates an observation: huge values are kept only as bounded previews.
          expect(JSON.stringify(observations).length).toBeLessThan(256 * 1024);
          for (const observation of observations) {
            const result = schemas[observation.type as keyof typeof schemas].safeParse(observation.data);
            expect(result.success, `${observation.type}: ${JSON.stringify(result.error?.issues.slice(0, 2))}`).toBe(true);
            // ...and storable: a NUL or half a surrogate pair from the BMC would make every append of this node fail.
            expect(() => canonicalJson(observation.data)).not.toThrow();
          }
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(DriverError);
          expect(typeof (error as DriverError).retryable).toBe('boolean');
        } finally {
          current = undefined;
          await driver.close();
        }
        // A hang costs one deadline, not more: the read is bounded.
        expect(Date.now() - started).toBeLessThan(3000);
        expect(server.activeSessions()).toBe(0);
      }),
      { numRuns: 35 },
    );
  });

  it('a NUL or half a surrogate pair in what a BMC sends becomes U+FFFD, and the rest of the reading is kept and storable', async () => {
    const local = await startMockupServer({
      folder: profileMockup('nvidia_dpu'),
      transform: (path, body) => (path === '/redfish/v1/Systems/Bluefield' ? { ...(body as object), Model: 'BlueField\u0000\u0000', SerialNumber: 'MT\uD800123' } : body),
    });
    const driver = new RedfishDriver({ baseUrl: local.url, username: 'root', password: 'calvin' });
    const observations = await driver.observe();
    await driver.close();
    await local.close();
    const inventory = observations.find((o) => o.type === 'NodeInventoryObserved')!;
    expect(inventory.type === 'NodeInventoryObserved' && inventory.data.system).toMatchObject({ model: 'BlueField\uFFFD\uFFFD', serialNumber: 'MT\uFFFD123', manufacturer: 'NVIDIA' });
    for (const observation of observations) expect(() => canonicalJson(observation.data), observation.type).not.toThrow();
  });

  it('a value of the wrong type is kept as unrecognized with its path, not dropped', async () => {
    const local = await startMockupServer({
      folder: profileMockup('nvidia_dpu'),
      transform: (path, body) => (path === '/redfish/v1/Systems/Bluefield' ? { ...(body as object), Model: 42, PowerState: 'Sideways' } : body),
    });
    const driver = new RedfishDriver({ baseUrl: local.url, username: 'root', password: 'calvin' });
    const observations = await driver.observe();
    await driver.close();
    await local.close();
    const inventory = observations.find((o) => o.type === 'NodeInventoryObserved')!;
    const power = observations.find((o) => o.type === 'PowerStateObserved')!;
    expect(inventory.data.unrecognized).toContainEqual({ path: '/redfish/v1/Systems/Bluefield#Model', value: 42 });
    expect(power.type === 'PowerStateObserved' && power.data.powerState).toBe('Unknown');
    expect(power.data.unrecognized).toContainEqual({ path: '/redfish/v1/Systems/Bluefield#PowerState', value: 'Sideways' });
  });
});
