import { describe, expect, it } from 'vitest';
import { createKeyedBatcher } from '../../services/core/batching.ts';
import { compileIpRules, isValidIpRule } from '../../services/access/ip-rules.ts';
import { issueSecret, parseSecret, secretMatchesDigest, storedDigest } from '../../services/access/key-secrets.ts';
import { effectiveCapabilities } from '../../services/access/roles.ts';
import { hashPassword, verifyPassword } from '../../services/access/passwords.ts';

describe('request coalescing', () => {
  it('never lets a call join a flush already in flight', async () => {
    const flushes: number[][] = [];
    let release: () => void = () => undefined;
    const batch = createKeyedBatcher<number, number>(async (_key, items) => {
      flushes.push(items);
      await new Promise<void>((resolve) => (release = resolve));
      return items.map((item) => item * 10);
    });
    const first = batch('k', 1);
    await Promise.resolve();
    const late = [batch('k', 2), batch('k', 3)];
    expect(flushes).toEqual([[1]]);
    release();
    expect(await first).toBe(10);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(flushes).toEqual([[1], [2, 3]]);
    release();
    expect(await Promise.all(late)).toEqual([20, 30]);
  });

  it('rejects every waiter of a failed flush and recovers for the next', async () => {
    let fail = true;
    const batch = createKeyedBatcher<number, number>(async (_key, items) => {
      if (fail) throw new Error('down');
      return items;
    });
    await expect(batch('k', 1)).rejects.toThrow('down');
    fail = false;
    expect(await batch('k', 2)).toBe(2);
  });
});

describe('IP rules', () => {
  it('validates addresses and CIDR ranges of both families', () => {
    for (const ok of ['10.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '2001:db8::1', '2001:db8::/32', '::/0']) expect(isValidIpRule(ok), ok).toBe(true);
    for (const bad of ['10.0.0.0/33', '2001:db8::/129', 'example.com', '10.0.0.1/8/2', '10.0.0.0/x', '']) expect(isValidIpRule(bad), bad).toBe(false);
  });

  it('matches IPv4, IPv6 and IPv4-mapped IPv6 clients', () => {
    const allowed = compileIpRules(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32'])!;
    expect(allowed('10.255.0.1')).toBe(true);
    expect(allowed('::ffff:10.0.0.1')).toBe(true);
    expect(allowed('192.0.2.7')).toBe(true);
    expect(allowed('192.0.2.8')).toBe(false);
    expect(allowed('2001:db8:ffff::1')).toBe(true);
    expect(allowed('2001:db9::1')).toBe(false);
    expect(allowed('not-an-ip')).toBe(false);
    expect(compileIpRules([])).toBeNull();
  });
});

describe('key secrets and passwords', () => {
  it('issues svk_ secrets with a lookup and ≥ 32 random bytes, checked against the stored hash', () => {
    const { key, lookup, secretHash } = issueSecret();
    expect(key).toMatch(/^svk_[a-z0-9]{12}[A-Za-z0-9_-]{43}$/);
    expect(parseSecret(key)).toBe(lookup);
    expect(secretHash).not.toContain(key.slice(16));
    expect(secretMatchesDigest(key, storedDigest(secretHash))).toBe(true);
    expect(secretMatchesDigest(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, storedDigest(secretHash))).toBe(false);
    expect(parseSecret('svk_short')).toBeNull();
    expect(parseSecret(`xxx_${key.slice(4)}`)).toBeNull();
  });

  it('hashes passwords with scrypt and a fresh salt', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse battery'), hashPassword('correct horse battery')]);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });

  it('policy: grants add, denials win', () => {
    expect([...effectiveCapabilities(['content:read', 'media:read'], { grant: ['users:read'], deny: ['media:read', 'users:read'] })]).toEqual(['content:read']);
  });
});
