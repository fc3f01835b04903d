import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../services/core/config.ts';

const valid = {
  MONGODB_URI: 'mongodb://127.0.0.1:27117',
  TEMPORAL_ADDRESS: '127.0.0.1:7233',
  SECRET_KEY: 'x'.repeat(32),
};

describe('configuration', () => {
  it('accepts a minimal valid environment and fills defaults', () => {
    const config = loadConfig(valid);
    expect(config.PORT).toBe(3000);
    expect(config.DB_PREFIX).toBe('cwb_');
    expect(config.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
  });

  it.each([
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['MONGODB_URI', { MONGODB_URI: 'postgres://nope' }],
    ['TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'no-port' }],
    ['SECRET_KEY', { SECRET_KEY: 'short' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'not a url' }],
    ['ADMIN_EMAIL', { ADMIN_EMAIL: 'nobody' }],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['WORKSPACE_DELETE_GRACE', { WORKSPACE_DELETE_GRACE: 'a week' }],
    ['WORKSPACE_DELETE_GRACE', { WORKSPACE_DELETE_GRACE: '366d' }],
  ])('stops with a message naming %s when it is bad', (name, override) => {
    expect(() => loadConfig({ ...valid, ...override })).toThrow(ConfigError);
    expect(() => loadConfig({ ...valid, ...override })).toThrow(new RegExp(`\\b${name}\\b`));
  });

  it('reads WORKSPACE_DELETE_GRACE as a duration in milliseconds: 7 days unless set, 0 purges at once', () => {
    expect(loadConfig(valid).WORKSPACE_DELETE_GRACE).toBe(7 * 86_400_000);
    expect(loadConfig({ ...valid, WORKSPACE_DELETE_GRACE: '36h' }).WORKSPACE_DELETE_GRACE).toBe(36 * 3_600_000);
    expect(loadConfig({ ...valid, WORKSPACE_DELETE_GRACE: '90s' }).WORKSPACE_DELETE_GRACE).toBe(90_000);
    expect(loadConfig({ ...valid, WORKSPACE_DELETE_GRACE: '0' }).WORKSPACE_DELETE_GRACE).toBe(0);
  });

  it("reads TRUST_PROXY as the proxies' addresses/CIDRs or a hop count; unset or false trusts nobody", () => {
    expect(loadConfig(valid).TRUST_PROXY).toEqual({ kind: 'none' });
    expect(loadConfig({ ...valid, TRUST_PROXY: 'false' }).TRUST_PROXY).toEqual({ kind: 'none' });
    expect(loadConfig({ ...valid, TRUST_PROXY: '2' }).TRUST_PROXY).toEqual({ kind: 'hops', hops: 2 });
    expect(loadConfig({ ...valid, TRUST_PROXY: '10.0.0.2, 172.28.0.0/24,::1,fd00:1::/64' }).TRUST_PROXY).toEqual({
      kind: 'addresses',
      rules: ['10.0.0.2', '172.28.0.0/24', '::1', 'fd00:1::/64'],
    });
  });

  it.each(['true', 'TRUE', 'yes', '*'])('refuses TRUST_PROXY=%s, saying why', (value) => {
    expect(() => loadConfig({ ...valid, TRUST_PROXY: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...valid, TRUST_PROXY: value })).toThrow(/TRUST_PROXY: .*any client could then forge its address/);
  });

  it.each(['10.0.0.2,', '10.0.0.0/33', 'proxy.internal', '17'])('refuses TRUST_PROXY=%s, naming the variable', (value) => {
    expect(() => loadConfig({ ...valid, TRUST_PROXY: value })).toThrow(/\bTRUST_PROXY\b/);
  });

  it('names a missing required variable', () => {
    const { MONGODB_URI: _omitted, ...rest } = valid;
    expect(() => loadConfig(rest)).toThrow(/MONGODB_URI/);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ ...valid, PORT: '' }).PORT).toBe(3000);
  });
});
