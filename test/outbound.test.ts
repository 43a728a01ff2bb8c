import type dns from 'node:dns';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destinationProblem, guardedLookup, OutboundClient, refusedAddressReason, urlProblem, type LookupFunction } from '../src/net/outbound.js';
import { LocalServer } from './support/mcp-server.js';
import { loadConfig } from '../src/config.js';

const closed = { allowPrivate: false };
const open = { allowPrivate: true };

describe('refused address ranges', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'unspecified, loopback or IPv4-compatible'],
    ['::', 'unspecified, loopback or IPv4-compatible'],
    ['::7f00:1', 'unspecified, loopback or IPv4-compatible'],
    ['fc00::1', 'unique local (private)'],
    ['fd00:ec2::254', 'unique local (private)'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:c0a8:101::1', 'private'],
  ])('%s is refused as %s', (address, reason) => {
    expect(refusedAddressReason(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.32.0.1', '192.169.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    '%s is a public address',
    (address) => {
      expect(refusedAddressReason(address)).toBeUndefined();
    },
  );
});

describe('save-time URL check', () => {
  it.each([
    ['http://127.0.0.1:8080/mcp', '127.0.0.1'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0x7f.0.0.1/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0/', '0.0.0.0'],
    ['http://10.0.0.1/', '10.0.0.1'],
    ['http://192.168.0.10/', '192.168.0.10'],
    ['http://172.20.1.1/', '172.20.1.1'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://100.64.0.1/', '100.64.0.1'],
    ['http://[::1]/', '::1'],
    ['http://[0:0:0:0:0:0:0:1]/', '::1'],
    ['http://[::]/', '::'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['http://[::ffff:7f00:1]/', '::ffff:7f00:1'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254'],
    ['http://[fe80::1]/', 'fe80::1'],
    ['https://[64:ff9b::7f00:1]/', '64:ff9b::7f00:1'],
  ])('%s → refused (%s)', (url, literal) => {
    expect(urlProblem(url, closed)).toContain(`(${literal})`);
    expect(urlProblem(url, open)).toBeUndefined();
  });

  it.each([
    ['ftp://example.com/', 'must use http or https'],
    ['file:///etc/passwd', 'must use http or https'],
    ['gopher://example.com/', 'must use http or https'],
    ['javascript:alert(1)', 'must use http or https'],
    ['example.com/mcp', 'must be an absolute http or https URL'],
    ['http://', 'must be an absolute http or https URL'],
    ['http://user:secret@example.com/', 'must not carry credentials'],
  ])('%s → %s, whatever the policy', (url, problem) => {
    expect(urlProblem(url, open)).toContain(problem);
    expect(urlProblem(url, closed)).toContain(problem);
  });

  it('public names and addresses pass (names are judged when connecting)', () => {
    for (const url of ['https://tools.example.com/mcp', 'http://8.8.8.8/', 'https://[2606:4700::1111]/', 'http://localhost:3000/']) {
      expect(urlProblem(url, closed)).toBeUndefined();
    }
  });
});

describe('save-time check of a destination someone else connects to (destinationProblem)', () => {
  type Answer = (name: string, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;
  /** A resolver driven by `answer`; every name it is asked is kept. */
  const resolver = (answer: Answer) => {
    const asked: string[] = [];
    const lookup = ((name: string, options: dns.LookupOptions, callback: Parameters<Answer>[1]) => {
      asked.push(name);
      expect(options.all).toBe(true);
      answer(name, callback);
    }) as unknown as LookupFunction;
    return { asked, lookup };
  };
  const fixed = (...addresses: string[]) => resolver((_name, callback) => callback(null, addresses.map((address) => ({ address, family: net.isIP(address) }))));
  const failing = (code: string) => resolver((name, callback) => callback(Object.assign(new Error(`getaddrinfo ${code} ${name}`), { code }), []));

  it('names are resolved, and any non-public address refuses the destination', async () => {
    expect(await destinationProblem('https://tools.example.com/mcp', closed, fixed('93.184.215.14', '2606:4700::1111').lookup)).toBeUndefined();
    expect(await destinationProblem('https://tools.example.com/mcp', closed, fixed('93.184.215.14', '100.64.0.1').lookup)).toBe(
      'must not point to a non-public address: tools.example.com resolves to 100.64.0.1 (carrier-grade NAT)',
    );
    expect(await destinationProblem('http://x.nip.io/', closed, fixed('169.254.169.254', 'fd00:ec2::254').lookup)).toContain(
      'resolves to 169.254.169.254 (link-local), fd00:ec2::254 (unique local (private))',
    );
  });

  it.each(['localhost', 'LocalHost.', 'a.b.localhost', 'metadata.google.internal', 'host.docker.internal', 'printer.local', 'nas.home.arpa', 'localhost.localdomain', 'metadata', 'redis'])(
    '%s is refused without asking the resolver',
    async (host) => {
      const { asked, lookup } = fixed('93.184.215.14');
      expect(await destinationProblem(`http://${host}:8080/mcp`, closed, lookup)).toMatch(/^must not point to a non-public host: \S+ is a /);
      expect(asked).toEqual([]);
    },
  );

  it('a name that does not resolve, or resolves to nothing, is refused', async () => {
    expect(await destinationProblem('https://nowhere.example.com/', closed, failing('ENOTFOUND').lookup)).toBe('must name a host that resolves: nowhere.example.com does not resolve');
    expect(await destinationProblem('https://nowhere.example.com/', closed, failing('ENODATA').lookup)).toContain('does not resolve');
    expect(await destinationProblem('https://nowhere.example.com/', closed, fixed().lookup)).toContain('does not resolve');
  });

  it('a resolver that fails, throws or stays silent past the timeout: refused, as not checked', async () => {
    expect(await destinationProblem('https://tools.example.com/', closed, failing('EAI_AGAIN').lookup)).toBe('could not be checked: resolving tools.example.com failed (EAI_AGAIN); try again');
    const throwing = resolver(() => {
      throw new TypeError('boom');
    });
    expect(await destinationProblem('https://tools.example.com/', closed, throwing.lookup)).toContain('could not be checked');
    const silent = resolver(() => {});
    const started = performance.now();
    expect(await destinationProblem('https://tools.example.com/', closed, silent.lookup, 50)).toBe('could not be checked: resolving tools.example.com took longer than 0.05 s; try again');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('IP literals and malformed URLs are judged as urlProblem judges them, without a lookup', async () => {
    const { asked, lookup } = fixed('127.0.0.1');
    expect(await destinationProblem('http://169.254.169.254/latest/meta-data/', closed, lookup)).toBe(urlProblem('http://169.254.169.254/latest/meta-data/', closed));
    expect(await destinationProblem('http://[::1]/', closed, lookup)).toContain('(::1)');
    expect(await destinationProblem('http://8.8.8.8/', closed, lookup)).toBeUndefined();
    expect(await destinationProblem('ftp://example.com/', closed, lookup)).toBe('must use http or https');
    expect(asked).toEqual([]);
  });

  it('where private destinations are allowed, nothing is resolved and local names pass', async () => {
    const { asked, lookup } = fixed('127.0.0.1');
    for (const url of ['http://localhost:8080/', 'http://metadata.google.internal/', 'http://tools.example.com/', 'http://127.0.0.1/']) {
      expect(await destinationProblem(url, open, lookup)).toBeUndefined();
    }
    expect(await destinationProblem('ftp://example.com/', open, lookup)).toBe('must use http or https');
    expect(asked).toEqual([]);
  });
});

describe('connect-time check', () => {
  let server: LocalServer;
  beforeAll(async () => {
    server = await LocalServer.start((_req, res) => res.end('x'.repeat(4096)));
  });
  afterAll(() => server.stop());

  const client = (policy: { allowPrivate: boolean }, lookup?: LookupFunction) => new OutboundClient(policy, { maxResponseBytes: 1 << 20, lookup });

  it('a name that resolves to loopback (localhost, from /etc/hosts) is refused before a byte is sent', async () => {
    const outbound = client(closed);
    const before = server.requests.length;
    await expect(outbound.fetch(`http://localhost:${server.port}/`)).rejects.toMatchObject({ cause: { code: 'EOUTBOUNDREFUSED' } });
    await expect(outbound.fetch(`http://127.0.0.1:${server.port}/`)).rejects.toMatchObject({ cause: { code: 'EOUTBOUNDREFUSED' } });
    await expect(outbound.fetch(`http://[::ffff:127.0.0.1]:${server.port}/`)).rejects.toMatchObject({ cause: { code: 'EOUTBOUNDREFUSED' } });
    expect(server.requests.length).toBe(before);
    await outbound.close();
  });

  it('the address connected to is the one checked: a rebinding name that now answers loopback is refused', async () => {
    const rebinding: LookupFunction = ((_name: string, _options: dns.LookupOptions, callback: (err: null, addresses: dns.LookupAddress[]) => void) =>
      callback(null, [{ address: '127.0.0.1', family: 4 }])) as unknown as LookupFunction;
    const outbound = client(closed, rebinding);
    const before = server.requests.length;
    await expect(outbound.fetch(`http://tools.example.com:${server.port}/`)).rejects.toMatchObject({ cause: { message: expect.stringContaining('non-public') } });
    expect(server.requests.length).toBe(before);
    await outbound.close();
  });

  it('a resolver answer mixing public and private addresses keeps only the public ones', async () => {
    const mixed: LookupFunction = ((_name: string, _options: dns.LookupOptions, callback: (err: null, addresses: dns.LookupAddress[]) => void) =>
      callback(null, [
        { address: '10.0.0.5', family: 4 },
        { address: '93.184.215.14', family: 4 },
        { address: '::1', family: 6 },
      ])) as unknown as LookupFunction;
    const answers = await new Promise<dns.LookupAddress[]>((resolve, reject) =>
      guardedLookup(closed, mixed)('tools.example.com', { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
    );
    expect(answers).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });

  it('with private destinations allowed, the local server is reachable; bodies past the cap fail', async () => {
    const outbound = new OutboundClient(open, { maxResponseBytes: 1024 });
    const response = await outbound.fetch(`http://localhost:${server.port}/`);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    const roomy = client(open);
    expect(await (await roomy.fetch(`http://127.0.0.1:${server.port}/`)).text()).toHaveLength(4096);
    await Promise.all([outbound.close(), roomy.close()]);
  });

  it('redirects are never followed, even to an allowed place; one to a private address never reaches it', async () => {
    const target = await LocalServer.start((_req, res) => res.end('private'));
    const redirecting = await LocalServer.redirecting(`http://127.0.0.1:${target.port}/admin`);
    const outbound = client(open);
    await expect(outbound.fetch(redirecting.url('/'))).rejects.toThrow(/refused to follow a redirect \(302 to http:\/\/127\.0\.0\.1:\d+\/admin\)/);
    await expect(outbound.fetch(redirecting.url('/'), { method: 'POST', body: '{}' })).rejects.toThrow(/redirect/);
    expect(redirecting.requests).toHaveLength(2);
    expect(target.requests).toHaveLength(0);
    await Promise.all([outbound.close(), target.stop(), redirecting.stop()]);
  });

  it('only http and https are fetched', async () => {
    const outbound = client(open);
    await expect(outbound.fetch('file:///etc/passwd')).rejects.toThrow(/only http and https/);
    await outbound.close();
  });
});

describe('configuration', () => {
  const production = { NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(32), ENCRYPTION_KEY: 'e'.repeat(32) };

  it('OUTBOUND_ALLOW_PRIVATE: refused by default in production, allowed elsewhere, set either way explicitly', () => {
    expect(loadConfig(production).outbound.allowPrivate).toBe(false);
    expect(loadConfig({ ...production, OUTBOUND_ALLOW_PRIVATE: 'true' }).outbound.allowPrivate).toBe(true);
    expect(loadConfig({}).outbound.allowPrivate).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test', OUTBOUND_ALLOW_PRIVATE: 'false' }).outbound.allowPrivate).toBe(false);
    expect(() => loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'yes' })).toThrow(/OUTBOUND_ALLOW_PRIVATE/);
  });

  it('connector limits and the previous encryption key', () => {
    expect(loadConfig({}).connectors).toEqual({ timeoutMs: 60_000, maxOutputBytes: 65_536 });
    expect(loadConfig({ CONNECTOR_TIMEOUT_MS: '5000', CONNECTOR_MAX_OUTPUT_BYTES: '2048' }).connectors).toEqual({ timeoutMs: 5000, maxOutputBytes: 2048 });
    expect(() => loadConfig({ CONNECTOR_TIMEOUT_MS: '0' })).toThrow(/CONNECTOR_TIMEOUT_MS/);
    expect(() => loadConfig({ CONNECTOR_MAX_OUTPUT_BYTES: 'lots' })).toThrow(/CONNECTOR_MAX_OUTPUT_BYTES/);
    expect(loadConfig({ ...production, ENCRYPTION_KEY_PREVIOUS: 'p'.repeat(32) }).encryptionKeyPrevious).toBe('p'.repeat(32));
    expect(() => loadConfig({ ENCRYPTION_KEY_PREVIOUS: 'short' })).toThrow(/ENCRYPTION_KEY_PREVIOUS/);
  });
});
