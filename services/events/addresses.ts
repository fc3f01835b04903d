import { isIP } from 'node:net';

/**
 * Which IP addresses a webhook may reach. Everything that is not plainly public unicast is
 * refused: private, loopback, link-local, unique-local, CGNAT, multicast, reserved, documentation,
 * benchmarking, relay anycast (the IANA IPv4 and IPv6 Special-Purpose Address Registries), and
 * IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4) are judged by the embedded address.
 * IPv6 outside global unicast `2000::/3` is refused whole, so every special block there (the
 * IPv4-compatible and SIIT-translated `::ffff:0:0:0/96` forms, discard-only `100::/64`, local-use
 * NAT64 `64:ff9b:1::/48`, SRv6 `5f00::/16`, unique-local, link-local, multicast) is covered
 * without a list that could miss one.
 */
const BLOCKED_V4: Array<[number, number]> = [
  [0x00000000, 8], // 0.0.0.0/8 "this network"
  [0x0a000000, 8], // 10/8 private
  [0x64400000, 10], // 100.64/10 carrier-grade NAT
  [0x7f000000, 8], // 127/8 loopback
  [0xa9fe0000, 16], // 169.254/16 link-local (cloud metadata)
  [0xac100000, 12], // 172.16/12 private
  [0xc0000000, 24], // 192.0.0/24 protocol assignments
  [0xc0000200, 24], // 192.0.2/24 documentation
  [0xc0586300, 24], // 192.88.99/24 6to4 relay anycast (deprecated): a relay forwards to any IPv4 address
  [0xc0a80000, 16], // 192.168/16 private
  [0xc6120000, 15], // 198.18/15 benchmarking
  [0xc6336400, 24], // 198.51.100/24 documentation
  [0xcb007100, 24], // 203.0.113/24 documentation
  [0xe0000000, 4], // 224/4 multicast
  [0xf0000000, 4], // 240/4 reserved and broadcast
];

function parseV4(address: string): number {
  return address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function v4Blocked(value: number): boolean {
  return BLOCKED_V4.some(([base, bits]) => (bits === 0 ? true : value >>> (32 - bits) === base >>> (32 - bits)));
}

/** 16 bytes of an IPv6 address (with `::` and a trailing dotted quad expanded). */
function parseV6(address: string): number[] {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const words: number[] = [];
  const tailV4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tailWords: number[] = [];
  if (tailV4) {
    const v4 = parseV4(tailV4[1]);
    tailWords = [v4 >>> 16, v4 & 0xffff];
    text = text.slice(0, -tailV4[1].length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const toWords = (part: string) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const headWords = toWords(head);
  const tailPart = [...(tail !== undefined ? toWords(tail) : []), ...tailWords];
  const fill = 8 - headWords.length - tailPart.length;
  words.push(...headWords, ...(tail !== undefined ? new Array(Math.max(0, fill)).fill(0) : []), ...tailPart);
  const bytes: number[] = [];
  for (const word of words) bytes.push(word >> 8, word & 0xff);
  return bytes;
}

function v6Blocked(bytes: number[]): boolean {
  const allZero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const embeddedV4 = (offset: number) => ((bytes[offset] << 24) | (bytes[offset + 1] << 16) | (bytes[offset + 2] << 8) | bytes[offset + 3]) >>> 0;
  if (allZero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4Blocked(embeddedV4(12)); // ::ffff:a.b.c.d
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && allZero(4, 12)) return v4Blocked(embeddedV4(12)); // 64:ff9b::/96 NAT64
  if ((bytes[0] & 0xe0) !== 0x20) return true; // outside 2000::/3 global unicast (see above)
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] <= 0x01) return true; // 2001::/23 IETF protocol assignments: Teredo 2001::/32 (tunnels to an IPv4 address), benchmarking, ORCHID
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0x0d && bytes[3] === 0xb8) return true; // 2001:db8::/32 documentation
  if (bytes[0] === 0x3f && bytes[1] === 0xff && (bytes[2] & 0xf0) === 0x00) return true; // 3fff::/20 documentation
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4Blocked(embeddedV4(2)); // 2002::/16 6to4
  return false;
}

/** True for an address a webhook may be delivered to; false for anything internal or not an IP. */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare.split('%')[0]);
  if (family === 4) return !v4Blocked(parseV4(bare));
  if (family === 6) return !v6Blocked(parseV6(bare));
  return false;
}
