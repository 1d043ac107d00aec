/**
 * The redirect policy of Redfish reads (`redirectTarget`): followed only on the BMC's own host (any port), never from
 * https to http, never with credentials of its own, never in a loop or past five hops; anything else refused with
 * `DRIVER_REDIRECT_REFUSED` naming the `Location`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DriverError, MAX_REDIRECT_HOPS, redirectTarget } from '../../src/drivers/index.js';

const answer = (location: string | undefined, status = 301) => ({ status, headers: location === undefined ? {} : { location } });
const refusal = (run: () => unknown): DriverError => {
  try {
    run();
  } catch (error) {
    if (error instanceof DriverError) return error;
    throw error;
  }
  throw new Error('not refused');
};

describe('which redirects a Redfish read follows', () => {
  it('any port of the BMC’s own host is followed, relative or absolute', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 65535 }), fc.constantFrom('/redfish/v1/', '/redfish/v1/Systems/1/'), (port, path) => {
        const origin = 'http://bmc-17.example:8000';
        expect(redirectTarget(answer(`http://BMC-17.example:${port}${path}`), 'GET', [`${origin}/redfish/v1`], origin)).toBe(`http://bmc-17.example:${port}${path}`);
        expect(redirectTarget(answer(path), 'GET', [`${origin}/redfish/v1`], origin)).toBe(`${origin}${path}`);
      }),
    );
  });

  it('another host is refused, whatever its name, and the error names the Location', () => {
    fc.assert(
      fc.property(fc.domain(), (host) => {
        fc.pre(host.toLowerCase() !== 'bmc-17.example');
        const error = refusal(() => redirectTarget(answer(`https://${host}/redfish/v1`), 'GET', ['https://bmc-17.example/redfish/v1'], 'https://bmc-17.example'));
        expect(error.code).toBe('DRIVER_REDIRECT_REFUSED');
        expect(error.details.location).toBe(`https://${host}/redfish/v1`);
      }),
    );
  });

  it('https is never downgraded to http; http may become https', () => {
    const origin = 'https://10.0.0.5';
    expect(refusal(() => redirectTarget(answer('http://10.0.0.5/redfish/v1'), 'GET', [`${origin}/redfish/v1`], origin)).message).toMatch(/downgrade/);
    expect(redirectTarget(answer('https://10.0.0.5:443/redfish/v1'), 'GET', ['http://10.0.0.5/redfish/v1'], 'http://10.0.0.5')).toBe('https://10.0.0.5/redfish/v1');
  });

  it('a Location with credentials of its own, or of another scheme, is refused', () => {
    expect(refusal(() => redirectTarget(answer('http://user:pw@10.0.0.5/redfish/v1'), 'GET', ['http://10.0.0.5/redfish/v1'], 'http://10.0.0.5')).code).toBe('DRIVER_REDIRECT_REFUSED');
    expect(refusal(() => redirectTarget(answer('ftp://10.0.0.5/redfish/v1'), 'GET', ['http://10.0.0.5/redfish/v1'], 'http://10.0.0.5')).code).toBe('DRIVER_REDIRECT_REFUSED');
  });

  it('a redirect without a Location is a protocol error naming the status', () => {
    const error = refusal(() => redirectTarget(answer(undefined, 308), 'GET', ['http://10.0.0.5/redfish/v1'], 'http://10.0.0.5'));
    expect(error.code).toBe('DRIVER_PROTOCOL');
    expect(error.message).toContain('308');
  });

  it(`a request takes at most ${MAX_REDIRECT_HOPS} hops`, () => {
    const origin = 'http://10.0.0.5';
    const visited = Array.from({ length: MAX_REDIRECT_HOPS + 1 }, (_, n) => `${origin}/hop${n}`);
    expect(() => redirectTarget(answer('/hop-next'), 'GET', visited.slice(0, MAX_REDIRECT_HOPS), origin)).not.toThrow();
    expect(refusal(() => redirectTarget(answer('/hop-next'), 'GET', visited, origin)).message).toMatch(/more than 5 redirects/);
  });
});
