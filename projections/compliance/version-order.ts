/**
 * Orders two normalized firmware versions: numeric runs compare as numbers, other runs as text
 * (`2.10` > `2.9`, `1.4a` > `1.4`). Pure.
 */
export function compareVersionOrder(a: string, b: string): number {
  const split = (v: string): string[] => v.toLowerCase().match(/\d+|[a-z]+/g) ?? [];
  const left = split(a);
  const right = split(b);
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    const x = left[i];
    const y = right[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    const order = nx && ny ? Number(x) - Number(y) : nx ? 1 : ny ? -1 : x.localeCompare(y);
    if (order !== 0) return Math.sign(order);
  }
  return 0;
}
