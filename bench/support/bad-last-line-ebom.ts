/**
 * The EBOM a careless or hostile caller sends: large, and bad only at its very end, so the whole file must be read
 * before it can be refused. Shared by the caller-isolation run and the trust bar (issue 39).
 */

/** A CSV EBOM of about `bytes`, every row valid but the last (no serial): refused at its last line. */
export function badLastLineEbom(bytes: number): { text: string; lastLine: number } {
  const lines = ['nodeId,site,rack,manufacturer,model,serial,gpuCount,powerFeed,networkPort'];
  let size = lines[0]!.length + 1;
  for (let i = 0; size < bytes; i += 1) {
    const line = `eb-r${String(Math.floor(i / 40)).padStart(5, '0')}-n${String(i % 40).padStart(2, '0')},ebsite,r${Math.floor(i / 40)},Supermicro,SYS-821GE-TNHR,SN${String(i).padStart(9, '0')},8,pdu-${i % 97}-a,tor-${i % 89}:${i % 48}`;
    lines.push(line);
    size += line.length + 1;
  }
  lines.push('eb-last,ebsite,rlast,Supermicro,SYS-821GE-TNHR,,8,pdu-a,tor-1:1');
  return { text: lines.join('\n'), lastLine: lines.length };
}
