/**
 * Canonical vendor names. A BMC names its maker as its firmware was written to: `Dell Inc.`, `DELL`, `HPE`,
 * `Hewlett Packard Enterprise`, `https://www.mellanox.com` (BlueField-3 BMC, `nvidia_dpu` capture). Inventory by
 * vendor counts one vendor once only if every spelling of it reads the same, so each goes through `canonicalVendor`.
 *
 * Guarantees:
 * - a URL or a bare domain never reaches the inventory: its host names the vendor (a known domain gives the known
 *   name, another gives its registered label, `acme-servers.example` giving `acme-servers`);
 * - spellings that differ only in case, punctuation or a legal suffix (`Inc.`, `Corporation`, `Co., Ltd.`) give
 *   one name, that of the table below, when the vendor is known;
 * - an unknown vendor's name is kept as written (trimmed, inner spaces collapsed): nothing is guessed.
 *
 * Each known name is the spelling the team's captures already show on System resources (`Dell Inc.`, `HPE`,
 * `Supermicro`, `NVIDIA`, `GIGABYTE`, `Cray Inc.`), so reading those captures gives what it gave before, and a
 * declared manufacturer matches the way drift compares it (case-insensitive, declared within observed).
 */
import { presentText } from './placeholder.js';

/** Canonical names by key: the name lower-cased, its legal suffixes and punctuation removed (`vendorKey`). */
const KNOWN_VENDORS: ReadonlyMap<string, string> = new Map([
  ['dell', 'Dell Inc.'],
  ['dell emc', 'Dell Inc.'],
  ['hpe', 'HPE'],
  ['hewlett packard enterprise', 'HPE'],
  ['hp', 'HP'],
  ['hewlett packard', 'HP'],
  ['supermicro', 'Supermicro'],
  ['super micro', 'Supermicro'],
  ['super micro computer', 'Supermicro'],
  ['smc', 'Supermicro'],
  ['nvidia', 'NVIDIA'],
  // Mellanox is NVIDIA's since 2020; its BlueField BMCs still name it by URL.
  ['mellanox', 'NVIDIA'],
  ['mlnx', 'NVIDIA'],
  ['gigabyte', 'GIGABYTE'],
  ['giga byte', 'GIGABYTE'],
  ['gigacomputing', 'GIGABYTE'],
  ['giga computing', 'GIGABYTE'],
  ['cray', 'Cray Inc.'],
  ['intel', 'Intel Corporation'],
  ['lenovo', 'Lenovo'],
  ['ibm', 'IBM'],
  ['fujitsu', 'Fujitsu'],
  ['cisco', 'Cisco'],
  ['cisco systems', 'Cisco'],
  ['quanta', 'Quanta'],
  ['quanta cloud technology', 'Quanta'],
  ['qct', 'Quanta'],
  ['inspur', 'Inspur'],
  ['asus', 'ASUS'],
  ['asustek', 'ASUS'],
  ['asustek computer', 'ASUS'],
  ['asrock', 'ASRock'],
  ['asrock rack', 'ASRock Rack'],
  ['wiwynn', 'Wiwynn'],
  ['ami', 'AMI'],
  ['american megatrends', 'AMI'],
  ['amd', 'AMD'],
  ['advanced micro devices', 'AMD'],
  ['huawei', 'Huawei'],
  ['xfusion', 'xFusion'],
  ['ampere', 'Ampere'],
  ['ampere computing', 'Ampere'],
]);

/** Registered domains of known vendors, by the label before the public suffix. */
const KNOWN_DOMAINS: ReadonlyMap<string, string> = new Map([
  ['dell', 'Dell Inc.'],
  ['delltechnologies', 'Dell Inc.'],
  ['hpe', 'HPE'],
  ['hp', 'HP'],
  ['supermicro', 'Supermicro'],
  ['nvidia', 'NVIDIA'],
  ['mellanox', 'NVIDIA'],
  ['gigabyte', 'GIGABYTE'],
  ['giga-computing', 'GIGABYTE'],
  ['cray', 'Cray Inc.'],
  ['intel', 'Intel Corporation'],
  ['lenovo', 'Lenovo'],
  ['ibm', 'IBM'],
  ['fujitsu', 'Fujitsu'],
  ['cisco', 'Cisco'],
  ['qct', 'Quanta'],
  ['inspur', 'Inspur'],
  ['asus', 'ASUS'],
  ['asrockrack', 'ASRock Rack'],
  ['wiwynn', 'Wiwynn'],
  ['ami', 'AMI'],
  ['amd', 'AMD'],
  ['huawei', 'Huawei'],
  ['xfusion', 'xFusion'],
  ['amperecomputing', 'Ampere'],
]);

/** Legal forms and generic words that end a company's name and do not tell one vendor from another. */
const LEGAL_SUFFIX = /(?:[\s,]+(?:inc|incorporated|corp|corporation|co|company|ltd|limited|llc|l\.l\.c|gmbh|ag|sa|s\.a|bv|b\.v|plc|pte|pty|kk|k\.k|technologies|technology|tech|computer|computers|systems|and subsidiaries|international|intl|\(r\)|®|™))+\.?$/i;

/** The key a vendor name is looked up by: lower case, `(R)` marks, legal suffixes and punctuation removed. */
export function vendorKey(name: string): string {
  let key = name.toLowerCase().replace(/\(r\)|®|™/g, '').replace(/\s+/g, ' ').trim();
  for (let previous = ''; previous !== key; ) {
    previous = key;
    key = key.replace(LEGAL_SUFFIX, '').replace(/[\s,.]+$/, '').trim();
  }
  return key.replace(/[.,]/g, '').replace(/-/g, ' ').replace(/\s+/g, ' ').trim();
}

/** The host of a URL (`https://www.mellanox.com/`) or a bare domain (`www.dell.com`), else undefined. */
function hostOf(value: string): string | undefined {
  const candidate = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : /^(?:www\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\/?$/i.test(value) ? `http://${value}` : undefined;
  if (!candidate) return undefined;
  try {
    const host = new URL(candidate).hostname.toLowerCase();
    return host.length > 0 ? host : undefined;
  } catch {
    return undefined;
  }
}

/** The vendor a host names: a known domain's vendor, else the label before its public suffix (`www.acme.co.uk`: `acme`). */
function vendorOfHost(host: string): string {
  const labels = host.replace(/^www\d*\./, '').split('.').filter((label) => label.length > 0);
  // `co.uk`, `com.cn`: a two-letter country code after a short generic label.
  const suffixLength = labels.length >= 3 && /^[a-z]{2}$/.test(labels[labels.length - 1]!) && /^(?:co|com|net|org|ac|gov)$/.test(labels[labels.length - 2]!) ? 2 : 1;
  const registered = labels[labels.length - suffixLength - 1] ?? labels[0] ?? host;
  return KNOWN_DOMAINS.get(registered) ?? KNOWN_VENDORS.get(vendorKey(registered)) ?? registered;
}

/** The canonical name of the vendor `raw` names, or undefined when it names none (absent, blank, a placeholder). */
export function canonicalVendor(raw: string | undefined): string | undefined {
  const present = presentText(raw);
  if (present === undefined) return undefined;
  const host = hostOf(present);
  if (host) return vendorOfHost(host);
  const written = present.replace(/\s+/g, ' ');
  return KNOWN_VENDORS.get(vendorKey(written)) ?? written;
}
