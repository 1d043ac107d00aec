import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { bodyCaps } from '../../src/api/body-caps.js';
import { prototypeKeyRefusal } from '../../src/api/prototype-keys.js';

const readme = () => readFile(new URL('../../src/api/README.md', import.meta.url), 'utf8');

describe('the body caps and their documentation', () => {
  it('every cap has a row in src/api/README.md with its bytes, and no row is stale', async () => {
    const text = await readme();
    const section = text.slice(text.indexOf('## Body caps'), text.indexOf('## Health and metrics'));
    const rows = new Map([...section.matchAll(/^\| `([A-Za-z]+)` \| (\d+) /gm)].map((match) => [match[1]!, Number(match[2])]));
    expect(Object.fromEntries(rows)).toEqual({ ...bodyCaps });
  });

  it('a body thread refuses the prototype keys fastify refuses on the request thread, wherever they are', () => {
    expect(prototypeKeyRefusal(JSON.parse('{"a":[{"b":{"__proto__":{"admin":true}}}]}'))).not.toBeNull();
    expect(prototypeKeyRefusal(JSON.parse('{"constructor":{"prototype":{"admin":true}}}'))).not.toBeNull();
    expect(prototypeKeyRefusal(JSON.parse('{"constructor":"a string is harmless","proto":1,"rows":[1,2,{"x":null}]}'))).toBeNull();
  });
});
