/**
 * A BMC credential is sent only to the addresses it is bound to, and over https unless the site allows http: an
 * operator (or an attacker with an operator token) who registers a node at another host does not harvest it.
 */
import { describe, expect, it } from 'vitest';
import { credentialRefusal, pollAddress, protocolOfAddress } from '../../src/poller/index.js';

const bound = { endpoints: ['10.30.0.0/16', '10.20.*.*', 'bmc-*.ams1.example.com', 'https://oob-*.fra1.example.com:8443'] };

describe('credential binding', () => {
  it.each([
    ['https://10.30.255.1', 'inside the CIDR'],
    ['https://10.20.3.4', 'a host glob, label by label'],
    ['https://bmc-17.ams1.example.com', 'a name glob'],
    ['https://BMC-17.AMS1.example.com/redfish/v1', 'names compare without case; the path does not matter'],
    ['https://oob-2.fra1.example.com:8443', 'an origin: scheme, host and port'],
  ])('%s may be sent the secret (%s)', (url) => {
    expect(credentialRefusal(bound, url, false)).toBeNull();
  });

  it.each([
    ['https://10.31.0.1', 'outside the CIDR'],
    ['https://10.20.1.1.attacker.example', 'a glob star never spans a dot'],
    ['https://attacker.example/10.20.1.1', 'the path is not the host'],
    ['https://bmc-17.x.ams1.example.com', 'one label per star'],
    ['https://oob-2.fra1.example.com', 'an origin pattern names its port'],
    ['https://oob-2.fra1.example.com:9443', 'another port'],
    ['ftp://10.20.1.1', 'not http(s)'],
    ['not a url', 'not a URL'],
  ])('%s is refused (%s)', (url) => {
    expect(credentialRefusal(bound, url, true)).toMatch(/matches none|not http|not a URL/);
  });

  it('plain http is refused unless the site allows it, and then only to bound addresses', () => {
    expect(credentialRefusal(bound, 'http://10.20.1.1', false)).toMatch(/https is required/);
    expect(credentialRefusal(bound, 'http://10.20.1.1', true)).toBeNull();
    expect(credentialRefusal(bound, 'http://10.99.1.1', true)).toMatch(/matches none/);
  });

  it('a credential bound to nothing goes nowhere', () => {
    expect(credentialRefusal({ endpoints: [] }, 'https://10.20.1.1', true)).toMatch(/matches none/);
  });

  it('an SNMP community is bound like any secret: sent to a PDU at a bound address only', () => {
    expect(credentialRefusal(bound, 'snmp://10.30.4.5:161', false)).toBeNull();
    expect(credentialRefusal(bound, 'snmp://10.20.1.1', false)).toBeNull();
    expect(credentialRefusal(bound, 'snmp://10.99.1.1:161', false)).toMatch(/matches none/);
  });

  it('registered addresses become poll addresses by protocol, and a targets file names the protocol by scheme', () => {
    expect(pollAddress('snmp', '10.30.4.5:161')).toBe('snmp://10.30.4.5:161');
    expect(pollAddress('snmp', 'snmp://10.30.4.5')).toBe('snmp://10.30.4.5');
    expect(pollAddress('ipmi', '10.30.4.5')).toBe('ipmi://10.30.4.5');
    expect(pollAddress('redfish', 'https://10.30.4.5')).toBe('https://10.30.4.5');
    expect(['snmp://pdu-1', 'ipmi://10.1.1.1:623', 'https://bmc-1', 'http://bmc-2'].map(protocolOfAddress)).toEqual(['snmp', 'ipmi', 'redfish', 'redfish']);
  });
});
