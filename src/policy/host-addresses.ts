import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * What the allow-list proxy and the workspace-file check need to know about an address or a host name: whether it is
 * this machine (loopback, unspecified, link-local — where cloud metadata services answer —, multicast, or an address of
 * one of this host's interfaces) and whether it is a private network's.
 */

const ipv4Octets = (address: string): number[] | undefined => {
  if (isIP(address) !== 4) return undefined;
  return address.split('.').map(Number);
};

/** The IPv4 address an IPv6 one carries (`::ffff:127.0.0.1`, `::ffff:7f00:1`, the deprecated `::127.0.0.1`), if any. */
const embeddedIpv4 = (address: string): string | undefined => {
  const lower = address.toLowerCase();
  const dotted = /^::(?:ffff:(?:0:)?)?(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^::(?:ffff:(?:0:)?)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = Number.parseInt(hex[1]!, 16);
    const low = Number.parseInt(hex[2]!, 16);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return undefined;
};

/** The first 16 bits of an IPv6 address, or undefined when it does not parse as one. */
const ipv6Head = (address: string): number | undefined => {
  if (isIP(address) !== 6) return undefined;
  const first = address.toLowerCase().split(':')[0]!;
  return first === '' ? 0 : Number.parseInt(first, 16);
};

const stripBrackets = (host: string): string => host.replace(/^\[|\]$/g, '').replace(/%.*$/, '').replace(/\.$/, '').toLowerCase();

/** This host's own interface addresses, read when asked (interfaces come and go). */
const interfaceAddresses = (): Set<string> => {
  const addresses = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) addresses.add(stripBrackets(entry.address));
  return addresses;
};

/**
 * Whether an IP address is this machine or reaches it: loopback (`127.0.0.0/8`, `::1`), unspecified (`0.0.0.0/8`,
 * `::`), link-local (`169.254.0.0/16` — the cloud metadata service —, `fe80::/10`), multicast and broadcast, or one of
 * this host's interface addresses; an IPv4-mapped IPv6 address is judged by the IPv4 one it carries.
 */
export const isThisMachineAddress = (ip: string): boolean => {
  const address = stripBrackets(ip);
  const carried = embeddedIpv4(address);
  if (carried !== undefined) return isThisMachineAddress(carried);
  const octets = ipv4Octets(address);
  if (octets) {
    const [a, b] = octets as [number, number];
    if (a === 127 || a === 0 || (a === 169 && b === 254) || a >= 224) return true;
    return interfaceAddresses().has(address);
  }
  const head = ipv6Head(address);
  if (head === undefined) return false;
  if (address === '::1' || address === '::' || (head & 0xffc0) === 0xfe80 || (head & 0xff00) === 0xff00) return true;
  return interfaceAddresses().has(address);
};

/** Whether an IP address belongs to a private network (`10/8`, `172.16/12`, `192.168/16`, `100.64/10`, `fc00::/7`). */
export const isPrivateAddress = (ip: string): boolean => {
  const address = stripBrackets(ip);
  const carried = embeddedIpv4(address);
  if (carried !== undefined) return isPrivateAddress(carried);
  const octets = ipv4Octets(address);
  if (octets) {
    const [a, b] = octets as [number, number];
    return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
  }
  const head = ipv6Head(address);
  return head !== undefined && (head & 0xfe00) === 0xfc00;
};

/**
 * Whether an allow-list entry itself names this machine: `localhost`, a name under `.localhost`, or an IP literal that
 * is this machine (see `isThisMachineAddress`). Only such an entry lets the proxy connect to this machine's addresses.
 */
export const namesThisMachine = (entry: string): boolean => {
  const host = stripBrackets(entry);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isThisMachineAddress(host);
};

/**
 * Why a workspace file may not put `entry` on the allow-list by itself, or undefined when it may: it names this
 * machine, is a private network's IP address, or is a wildcard over a whole top-level domain (`*.com`, `*.internal`).
 */
export const broadHostReason = (entry: string): string | undefined => {
  const host = stripBrackets(entry);
  if (namesThisMachine(entry)) return 'this machine';
  if (isIP(host) !== 0 && isPrivateAddress(host)) return 'a private network address';
  if (host.startsWith('*.') && !host.slice(2).includes('.')) return `every name under .${host.slice(2)}`;
  return undefined;
};
