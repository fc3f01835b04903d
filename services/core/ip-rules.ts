import { BlockList, isIP } from 'node:net';

/** `1.2.3.4`, `10.0.0.0/8`, `2001:db8::1`, `2001:db8::/32`. */
export function isValidIpRule(rule: string): boolean {
  const [address, prefix, extra] = rule.split('/');
  const family = isIP(address);
  if (!family || extra !== undefined) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/** An IPv4 client seen through a dual-stack socket arrives as `::ffff:a.b.c.d`. */
export function unmap(ip: string): string {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return match ? match[1] : ip;
}

/** Compiled allow-list; an empty list allows every address. */
export function compileIpRules(rules: readonly string[]): ((ip: string) => boolean) | null {
  if (rules.length === 0) return null;
  const list = new BlockList();
  for (const rule of rules) {
    const [address, prefix] = rule.split('/');
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return (ip) => {
    const candidate = unmap(ip);
    const family = isIP(candidate);
    if (!family) return false;
    return list.check(candidate, family === 4 ? 'ipv4' : 'ipv6');
  };
}
