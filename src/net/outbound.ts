import dns, { type LookupAddress } from 'node:dns';
import net from 'node:net';
import * as v from 'valibot';
import { Agent, buildConnector, fetch as undiciFetch, type Dispatcher } from 'undici';

/**
 * The outbound policy (DESIGN §8): the one gate for calls to servers users choose (connectors now, webhooks and
 * gateway `mcp` tools later). http/https only; unless private destinations are allowed, loopback, private,
 * link-local, CGNAT, unspecified and other non-public addresses are refused — at save time for IP literals, and at
 * connect time on the address actually connected to (a name is resolved once, checked, and that address is used, so
 * DNS rebinding cannot slip through); redirects are never followed. A destination someone else connects to (a gateway
 * `mcp` tool's server) cannot be checked at connect time, so `destinationProblem` also resolves its name when saved.
 */

export interface OutboundPolicy {
  /** Whether loopback and private destinations may be reached (development, tests, self-hosted tool servers). */
  allowPrivate: boolean;
}

export type LookupFunction = typeof dns.lookup;

/** A call the policy refused; `code` lets callers tell it from a network failure. */
export class OutboundRefusedError extends Error {
  readonly code = 'EOUTBOUNDREFUSED';
}

const IPV4_REFUSED: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const IPV6_REFUSED: [string, number, string][] = [
  // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
  ['::', 96, 'unspecified, loopback or IPv4-compatible'],
  ['64:ff9b:1::', 48, 'local NAT64'],
  ['100::', 64, 'discard-only'],
  ['2001::', 32, 'Teredo'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

/** An IPv4 address as the two low IPv6 groups, for addresses that embed one (NAT64, 6to4). */
function v4Groups(address: string): [string, string] {
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}

/**
 * One list per range, so a refusal can say which range matched. IPv4-mapped IPv6 (::ffff:a.b.c.d) is matched against
 * the IPv4 rules by BlockList itself; NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses carry an IPv4 address
 * inside, so each IPv4 rule is repeated at its place there.
 */
const RULES: { list: net.BlockList; reason: string }[] = [
  ...IPV4_REFUSED.map(([network, prefix, reason]) => {
    const list = new net.BlockList();
    list.addSubnet(network, prefix, 'ipv4');
    const [high, low] = v4Groups(network);
    list.addSubnet(`64:ff9b::${high}:${low}`, 96 + prefix, 'ipv6');
    list.addSubnet(`2002:${high}:${low}::`, 16 + prefix, 'ipv6');
    return { list, reason };
  }),
  ...IPV6_REFUSED.map(([network, prefix, reason]) => {
    const list = new net.BlockList();
    list.addSubnet(network, prefix, 'ipv6');
    return { list, reason };
  }),
];

/** Why an IP address is not a public destination, or undefined when it is one. */
export function refusedAddressReason(address: string): string | undefined {
  const family = net.isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return RULES.find(({ list }) => list.check(address, type))?.reason;
}

/** The IP address a URL's host names literally (WHATWG parsing normalises 2130706433, 0177.0.0.1, 0x7f.1, [::ffff:…]). */
export function ipLiteralOf(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return net.isIP(host) ? host : undefined;
}

/**
 * The save-time check of a destination URL: what is wrong with it, or undefined. Names are not resolved here
 * (an answer now proves nothing about the address used later; `destinationProblem` resolves them for destinations
 * we never connect to ourselves); IP literals are judged at once.
 */
export function urlProblem(text: string, policy: OutboundPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not carry credentials; send them as headers';
  const literal = ipLiteralOf(url);
  const reason = literal && !policy.allowPrivate ? refusedAddressReason(literal) : undefined;
  return reason ? `must not point to a ${reason} address (${literal})` : undefined;
}

/** How long the save-time check of a name waits for the resolver; past it the save is refused (it could not be checked). */
export const RESOLVE_TIMEOUT_MS = 3000;

/**
 * Names that are local by definition, judged without asking a resolver: localhost (RFC 6761), mDNS's .local
 * (RFC 6762), .internal (reserved for private use; cloud metadata such as metadata.google.internal), .home.arpa
 * (RFC 8375) and .localdomain.
 */
const LOCAL_NAMES: [string, string][] = [
  ['localhost', 'a loopback name'],
  ['local', 'a link-local (mDNS) name'],
  ['internal', 'a private-use name (.internal)'],
  ['home.arpa', 'a home-network name (.home.arpa)'],
  ['localdomain', 'a local-network name (.localdomain)'],
];

/** Why a host name can only mean a local machine, or undefined; a single-label name resolves only through a local network's search domains. */
function localNameReason(host: string): string | undefined {
  const known = LOCAL_NAMES.find(([suffix]) => host === suffix || host.endsWith(`.${suffix}`));
  if (known) return known[1];
  return host.includes('.') ? undefined : 'a single-label name, meaningful only on a local network';
}

/** Resolver answers that mean the name has no address (as opposed to a resolver that failed). */
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA']);

class ResolveTimeout extends Error {}

/** Every address a name resolves to, or the resolver's error; a resolver silent past `timeoutMs` is a ResolveTimeout. */
function resolveAll(host: string, lookup: LookupFunction, timeoutMs: number): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new ResolveTimeout()), timeoutMs);
    const settle = (err: Error | null, addresses?: LookupAddress[]) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(addresses ?? []);
    };
    try {
      lookup(host, { all: true }, (err, addresses) => settle(err, addresses));
    } catch (err) {
      settle(err as Error);
    }
  });
}

/**
 * The save-time check of a destination that someone else connects to (a gateway `mcp` tool's server: the gateway calls
 * it, so the connect-time check never sees it). Beyond `urlProblem`: unless private destinations are allowed, a name
 * that is local by definition is refused as is, and any other name is resolved (every address, within `timeoutMs`)
 * and refused if ANY address is not public, if it does not resolve (the gateway could not reach it either), or if
 * it could not be checked. An answer now proves nothing about later answers (a rebinding name passes); it stops
 * the plain cases: names of metadata services, localhost, and wildcard DNS such as 169.254.169.254.nip.io.
 */
export async function destinationProblem(
  text: string,
  policy: OutboundPolicy,
  lookup: LookupFunction = dns.lookup,
  timeoutMs = RESOLVE_TIMEOUT_MS,
): Promise<string | undefined> {
  const problem = urlProblem(text, policy);
  if (problem || policy.allowPrivate) return problem;
  const url = new URL(text);
  if (ipLiteralOf(url)) return undefined; // judged by urlProblem
  const host = url.hostname.replace(/\.+$/, '');
  const local = localNameReason(host);
  if (local) return `must not point to a non-public host: ${host} is ${local}`;
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host, lookup, timeoutMs);
  } catch (err) {
    if (err instanceof ResolveTimeout) return `could not be checked: resolving ${host} took longer than ${timeoutMs / 1000} s; try again`;
    const code = (err as NodeJS.ErrnoException).code;
    if (code && NOT_FOUND.has(code)) return `must name a host that resolves: ${host} does not resolve`;
    return `could not be checked: resolving ${host} failed (${code ?? 'resolver error'}); try again`;
  }
  if (addresses.length === 0) return `must name a host that resolves: ${host} does not resolve`;
  const refused = addresses.flatMap(({ address }) => {
    const reason = refusedAddressReason(address);
    return reason ? [`${address} (${reason})`] : [];
  });
  return refused.length > 0 ? `must not point to a non-public address: ${host} resolves to ${refused.join(', ')}` : undefined;
}

function refuse(address: string, policy: OutboundPolicy): OutboundRefusedError | undefined {
  if (policy.allowPrivate) return undefined;
  const reason = refusedAddressReason(address);
  return reason ? new OutboundRefusedError(`refused to connect to ${address}: a ${reason} address`) : undefined;
}

/** Where a destination points, for the audit log: the host only (a URL's path or query may carry a token). */
export function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/** The request field of an outbound destination (a connector's or a webhook's URL), checked against the policy when saved. */
export const outboundUrl = (policy: OutboundPolicy) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.maxLength(2048),
    v.check((url) => urlProblem(url, policy) === undefined, (issue) => urlProblem(String(issue.input), policy) ?? 'is not allowed'),
  );

/** A dns.lookup that drops refused addresses, so the socket can only connect to an allowed one. */
export function guardedLookup(policy: OutboundPolicy, lookup: LookupFunction = dns.lookup): LookupFunction {
  const guarded = (hostname: string, options: dns.LookupOptions, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const allowed = addresses.filter(({ address }) => !refuse(address, policy));
      if (allowed.length === 0) {
        const refused = addresses.map(({ address }) => address).join(', ');
        return callback(new OutboundRefusedError(`refused to connect to ${hostname}: it resolves only to non-public addresses (${refused})`), []);
      }
      if (options.all) return callback(null, allowed);
      const [first] = allowed as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
  return guarded as unknown as LookupFunction;
}

/**
 * The connector undici uses for every socket: IP literals are judged before connecting, names through the guarded
 * lookup, and the address actually connected to is checked once more before a byte is sent.
 */
function guardedConnector(policy: OutboundPolicy, lookup: LookupFunction, timeoutMs: number): buildConnector.connector {
  const connect = buildConnector({ lookup: guardedLookup(policy, lookup), timeout: timeoutMs } as buildConnector.BuildOptions);
  return (options, callback) => {
    const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
    const early = net.isIP(host) ? refuse(host, policy) : undefined;
    if (early) return callback(early, null);
    connect(options, (err, socket) => {
      if (err) return callback(err, null);
      const late = refuse(socket!.remoteAddress ?? '', policy);
      if (late) {
        socket!.destroy();
        return callback(late, null);
      }
      callback(null, socket!);
    });
  };
}

/** Ends a response body with an error once it has carried more than `limit` bytes (a hostile server cannot fill memory). */
function capBody(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) controller.error(new OutboundRefusedError(`response larger than ${limit} bytes`));
        else controller.enqueue(chunk);
      },
    }),
  );
}

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface OutboundOptions {
  /** Largest response body accepted (a streamed body counts over its whole life). */
  maxResponseBytes: number;
  /** TCP (and TLS) connect timeout. */
  connectTimeoutMs?: number;
  /** Name resolution; the system resolver unless a test supplies another. */
  lookup?: LookupFunction;
}

/** A fetch bound to the policy, with its own connection pool; `close` ends the pool's sockets (and any request still open). */
export class OutboundClient {
  private readonly dispatcher: Dispatcher;

  constructor(
    readonly policy: OutboundPolicy,
    private readonly options: OutboundOptions,
  ) {
    this.dispatcher = new Agent({
      connect: guardedConnector(policy, options.lookup ?? dns.lookup, options.connectTimeoutMs ?? 10_000),
      // Streams (SSE) may be quiet for long stretches; callers bound their requests with their own timeouts.
      bodyTimeout: 0,
      headersTimeout: 0,
    });
  }

  /** The policy-bound fetch: the scheme checked, redirects refused, the response body capped. */
  readonly fetch: FetchLike = async (input, init) => {
    const url = new URL(String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefusedError(`refused ${url.protocol} URL: only http and https`);
    const response = (await undiciFetch(url, { ...(init as object), redirect: 'manual', dispatcher: this.dispatcher })) as unknown as Response;
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      const location = response.headers.get('location') ?? 'nowhere';
      throw new OutboundRefusedError(`refused to follow a redirect (${response.status} to ${location.slice(0, 200)})`);
    }
    if (!response.body) return response;
    return new Response(capBody(response.body, this.options.maxResponseBytes), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };

  async close(): Promise<void> {
    await this.dispatcher.destroy();
  }
}
