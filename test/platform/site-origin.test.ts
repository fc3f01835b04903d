import { describe, expect, it } from 'vitest';
import { siteOrigin } from '../../services/platform/site-origin.ts';

describe('site origin rule for media and page links', () => {
  const site = { domains: ['blog.example.test', 'www.blog.example.test'] };
  it('takes scheme and port from PUBLIC_BASE_URL, the host from the site', () => {
    expect(siteOrigin({ PUBLIC_BASE_URL: 'http://localhost:8080' }, site)).toBe('http://blog.example.test:8080');
    expect(siteOrigin({ PUBLIC_BASE_URL: 'https://cms.example.com' }, site)).toBe('https://blog.example.test');
    expect(siteOrigin({ PUBLIC_BASE_URL: 'https://cms.example.com:8443/' }, site)).toBe('https://blog.example.test:8443');
    expect(siteOrigin({ PUBLIC_BASE_URL: 'http://cms.example.com:80' }, site)).toBe('http://blog.example.test');
  });
  it('defaults to https on the default port behind a proxy, and to the base URL for a site without domain', () => {
    expect(siteOrigin({ PUBLIC_BASE_URL: undefined }, site)).toBe('https://blog.example.test');
    expect(siteOrigin({ PUBLIC_BASE_URL: 'http://localhost:8080/' }, { domains: [] })).toBe('http://localhost:8080');
    expect(siteOrigin({ PUBLIC_BASE_URL: undefined }, { domains: [] })).toBe('');
  });
});
