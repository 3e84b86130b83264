// useProxy: send THIS Node process's HTTP(S) traffic through the recording
// proxy, for a test that calls the agent in-process rather than in a child
// (a child gets Proxy.env instead, whose preload does the same there).
import dc from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { EnvHttpProxyAgent, setGlobalDispatcher } from 'undici';

/** What useProxy needs of a proxy: a Proxy from startProxy has all of it. */
export interface ProxyTarget {
  /** The proxy's URL, http://127.0.0.1:PORT. */
  url: string;
  /** The proxy's CA certificate (PEM), trusted for TLS through the proxy. */
  caPath: string;
  /** The proxy's environment for a child: its NO_PROXY is used when noProxy is not given. */
  env?: Record<string, string>;
  /** The control API's URL: always reached directly, never through the proxy. */
  controlUrl?: string;
  /**
   * Hosts reached directly (NO_PROXY entries: a name, which covers its
   * subdomains, an IP address, host:port, or "*"). Default: the proxy
   * env's NO_PROXY, which holds loopback except a host the proxy allows,
   * else localhost, 127.0.0.1 and ::1.
   */
  noProxy?: string[];
}

/** Options of useProxy. */
export interface UseProxyOptions {
  /**
   * Watch every HTTP connection this process opens (fetch, any undici
   * dispatcher, node:http(s) with any Agent) and record, as a violation,
   * one that neither lands on the proxy nor is exempt by noProxy: it may
   * have reached a real service unrecorded.
   */
  guard?: boolean;
}

/** What useProxy returns: restore() (or `using`) puts back what it replaced. */
export interface ProxyUse extends Disposable {
  /** The connections that went around the proxy, one line each, with the stack that made it when known. */
  violations(): string[];
  /** Puts back the previous global dispatcher and agents and stops the guard; idempotent. */
  restore(): void;
}

const dispatcherKeys = [Symbol.for('undici.globalDispatcher.1'), Symbol.for('undici.globalDispatcher.2')];
const loopbackHosts = ['localhost', '127.0.0.1', '::1'];
const defaultPort = (protocol: string): number => (protocol === 'https:' ? 443 : 80);
const bare = (host: string): string =>
  (host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host).toLowerCase();

/**
 * useProxy makes this process's fetch and node:http/node:https go through
 * the proxy, on Node 20, 22 and 24, whatever Node does with HTTPS_PROXY:
 *
 * - fetch: undici's EnvHttpProxyAgent (the npm undici this package
 *   depends on) becomes the global dispatcher, which Node's own fetch uses
 *   too; TLS through the proxy trusts the system roots and the proxy's CA.
 * - node:http and node:https: http.globalAgent and https.globalAgent are
 *   replaced with agents that tunnel through the proxy with CONNECT
 *   (trusting the proxy's CA unless a request names its own). A library
 *   that makes an Agent of its own is not routed: the guard reports it.
 *
 * Hosts in noProxy are reached directly. restore(), or leaving a `using`
 * block, puts back the previous dispatcher and agents.
 */
export function useProxy(proxy: ProxyTarget, opts: UseProxyOptions = {}): ProxyUse {
  const proxyURL = new URL(proxy.url);
  if (proxyURL.protocol !== 'http:') {
    throw new Error(`useProxy: the proxy URL ${proxy.url} is not http://host:port: pass the url of a Proxy from startProxy`);
  }
  let caPem: string;
  try {
    caPem = readFileSync(proxy.caPath, 'utf8');
  } catch (err) {
    throw new Error(`useProxy: cannot read the proxy's CA at ${proxy.caPath} (${String(err)}): pass the caPath of a running Proxy`);
  }
  const ca = [...tls.rootCertificates, caPem];
  const noProxy = [...(proxy.noProxy ?? (proxy.env?.NO_PROXY !== undefined
    ? envNoProxy(proxy.env.NO_PROXY)
    : loopbackHosts))];
  if (proxy.controlUrl) noProxy.push(new URL(proxy.controlUrl).host);
  const exempt = exemption(noProxy);

  // fetch.
  const previous = dispatcherKeys.map((key) => (globalThis as Record<symbol, unknown>)[key]);
  const agent = new EnvHttpProxyAgent({
    httpProxy: proxy.url,
    httpsProxy: proxy.url,
    noProxy: noProxy.join(','),
    requestTls: { ca },
  });
  setGlobalDispatcher(agent);

  // node:http(s).
  const previousAgents = { http: http.globalAgent, https: https.globalAgent };
  const tunnel = tunneller(proxyURL);
  const { HttpTunnelAgent, HttpsTunnelAgent } = tunnelAgents({ exempt, tunnel, ca });
  const httpAgent = new HttpTunnelAgent((http.globalAgent as unknown as { options: http.AgentOptions }).options);
  const httpsAgent = new HttpsTunnelAgent(https.globalAgent.options);
  http.globalAgent = httpAgent;
  https.globalAgent = httpsAgent;

  const found: string[] = [];
  const stopGuard = opts.guard ? guard(proxyURL, exempt, found) : () => {};

  let restored = false;
  const restore = (): void => {
    if (restored) return;
    restored = true;
    stopGuard();
    dispatcherKeys.forEach((key, i) => {
      const value = previous[i];
      if (value !== undefined) {
        Object.defineProperty(globalThis, key, { value, writable: true, enumerable: false, configurable: false });
      }
    });
    if (http.globalAgent === httpAgent) http.globalAgent = previousAgents.http;
    if (https.globalAgent === httpsAgent) https.globalAgent = previousAgents.https;
    httpAgent.destroy();
    httpsAgent.destroy();
    agent.close().catch(() => {}); // lets requests in flight finish
  };
  return { violations: () => [...found], restore, [Symbol.dispose]: restore };
}

/**
 * envNoProxy is the proxy env's NO_PROXY as useProxy uses it. When the
 * proxy allows an origin on loopback, the env leaves that host out of
 * NO_PROXY; then no loopback name is exempt, since the others reach the
 * same machine: `localhost:P` must not go around the proxy to a server
 * the proxy records as `127.0.0.1:P`.
 */
function envNoProxy(value: string): string[] {
  const entries = value.split(/[\s,]+/).filter(Boolean);
  const kept = loopbackHosts.filter((h) => entries.includes(h));
  if (kept.length === loopbackHosts.length || kept.length === 0) return entries;
  return entries.filter((e) => !loopbackHosts.includes(e));
}

/** isLoopback reports whether host names this machine only (localhost, 127.0.0.0/8, ::1). */
function isLoopback(host: string): boolean {
  const h = bare(host).replace(/^::ffff:/, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || (net.isIPv4(h) && h.startsWith('127.'));
}

/** exemption returns whether NO_PROXY entries exempt host:port. */
function exemption(entries: string[]): (host: string, port: number) => boolean {
  const parsed = entries.map((entry) => {
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry);
    const [host, port] = m ? [m[1]!, Number(m[2])] : [entry, 0];
    return { host: bare(host).replace(/^\*?\./, ''), port };
  });
  return (host, port) => {
    host = bare(host);
    return parsed.some((e) => (e.port === 0 || e.port === port) &&
      (e.host === '*' || host === e.host || host.endsWith('.' + e.host)));
  };
}

type Tunnel = (protocol: string, host: string, port: number, tlsOptions: tls.ConnectionOptions | null,
  callback: (err: Error | null, socket?: Duplex) => void) => void;

/**
 * tunneller opens connections through the proxy: CONNECT host:port, then,
 * when tlsOptions is given, TLS to the origin inside the tunnel.
 */
function tunneller(proxy: URL): Tunnel {
  const connectTimeoutMs = 10_000;
  return (protocol, hostname, port, tlsOptions, callback) => {
    const host = bare(hostname);
    const authority = `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
    let auth = '';
    if (proxy.username) {
      const cred = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
      auth = `Proxy-Authorization: Basic ${Buffer.from(cred).toString('base64')}\r\n`;
    }
    let done = false;
    const sock = net.connect({ host: bare(proxy.hostname), port: Number(proxy.port || 80) });
    const finish = (err: Error | null, socket?: Duplex): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) sock.destroy();
      callback(err, socket);
    };
    const timer = setTimeout(() => finish(new Error(
      `agentvcr: the proxy at ${proxy.host} did not open a tunnel to ${authority} within ${connectTimeoutMs / 1000} s`)), connectTimeoutMs);
    timer.unref();
    sock.on('error', (err) => finish(err));
    sock.once('connect', () => sock.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`));
    let head = Buffer.alloc(0);
    const onReadable = (): void => {
      for (let chunk: Buffer | null; (chunk = sock.read() as Buffer | null) !== null;) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          if (head.length > 64 << 10) finish(new Error(`agentvcr: the proxy at ${proxy.host} sent no end to its answer to CONNECT ${authority}`));
          continue;
        }
        sock.removeListener('readable', onReadable);
        const rest = head.subarray(end + 4);
        if (rest.length > 0) sock.unshift(rest);
        const status = head.subarray(0, end).toString('latin1').split('\r\n')[0] ?? '';
        if (!/^HTTP\/1\.[01] 200(?: |$)/.test(status)) {
          finish(new Error(`agentvcr: the proxy at ${proxy.host} answered CONNECT ${authority} with "${status}" ` +
            `(${protocol}//${authority} is not on its allow list, or the proxy failed: see its log)`));
          return;
        }
        if (!tlsOptions) {
          finish(null, sock);
          return;
        }
        const secure = tls.connect({ ...tlsOptions, socket: sock, host });
        secure.once('secureConnect', () => finish(null, secure));
        secure.on('error', (err) => finish(err));
        return;
      }
    };
    sock.on('readable', onReadable);
  };
}

type ConnectionOptions = http.ClientRequestArgs & tls.ConnectionOptions;
type Route = {
  scheme: 'http:' | 'https:';
  exempt: (host: string, port: number) => boolean;
  tunnel: Tunnel;
  ca: string[];
};
type Callback = (err: Error | null, socket: Duplex) => void;

/**
 * tunnelConnection is createConnection of the agents useProxy installs:
 * a connection NO_PROXY exempts (or to a Unix socket) is the agent's own
 * (direct()); any other goes through the proxy, answered through callback
 * once the tunnel is open, which Node's Agent supports.
 */
function tunnelConnection(route: Route, options: ConnectionOptions, callback: Callback | undefined,
  direct: () => Duplex | undefined): Duplex | undefined {
  const host = options.host ?? 'localhost';
  const port = Number(options.port) || defaultPort(route.scheme);
  if (options.socketPath || route.exempt(host, port)) return direct();
  const { host: _host, port: _port, path: _path, socket: _socket, ...rest } = options as Record<string, unknown>;
  const tlsOptions = route.scheme === 'https:'
    ? { ...rest, ca: options.ca ?? route.ca, servername: options.servername || (net.isIP(bare(host)) ? undefined : bare(host)) } as tls.ConnectionOptions
    : null;
  route.tunnel(route.scheme, host, port, tlsOptions, (err, socket) => callback?.(err, socket as Duplex));
  return undefined;
}

/**
 * tunnelAgents makes the agent classes useProxy installs, with the route
 * in the class rather than in an instance: Node makes an agent of its own
 * from the global one's constructor (`new globalAgent.constructor()`, for
 * agent: false), which must tunnel too.
 */
function tunnelAgents(common: Omit<Route, 'scheme'>): { HttpTunnelAgent: typeof http.Agent; HttpsTunnelAgent: typeof https.Agent } {
  const httpRoute: Route = { ...common, scheme: 'http:' };
  const httpsRoute: Route = { ...common, scheme: 'https:' };
  /** An http.Agent whose connections go through the proxy, except those NO_PROXY exempts. */
  class HttpTunnelAgent extends http.Agent {
    override createConnection(options: ConnectionOptions, callback?: Callback): Duplex | undefined {
      return tunnelConnection(httpRoute, options, callback, () => super.createConnection(options, callback as never) as Duplex | undefined);
    }
  }
  /** An https.Agent whose connections go through the proxy, except those NO_PROXY exempts. */
  class HttpsTunnelAgent extends https.Agent {
    override createConnection(options: ConnectionOptions, callback?: Callback): Duplex | undefined {
      return tunnelConnection(httpsRoute, options, callback, () => super.createConnection(options, callback as never) as Duplex | undefined);
    }
  }
  return { HttpTunnelAgent, HttpsTunnelAgent };
}

/**
 * guard subscribes to the connections this process opens and pushes a
 * line to found for each that neither lands on the proxy nor is exempt.
 * It returns what unsubscribes.
 */
function guard(proxy: URL, exempt: (host: string, port: number) => boolean, found: string[]): () => void {
  const proxyPort = Number(proxy.port || 80);
  const proxyHost = bare(proxy.hostname);
  const onProxy = (socket: net.Socket): boolean => {
    if (socket.remotePort !== proxyPort) return false;
    const got = String(socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    if (proxyHost === 'localhost') return got === '::1' || got.startsWith('127.');
    return net.isIP(proxyHost) ? got === proxyHost : true;
  };
  const check = (what: string, protocol: string, host: string, port: number, socket: net.Socket, stack: string | undefined): void => {
    // No address: a Unix socket, not the network.
    if (!socket.remoteAddress || onProxy(socket)) return;
    // An exempt loopback name must also have connected to loopback.
    if (exempt(host, port) && (!isLoopback(host) || isLoopback(socket.remoteAddress))) return;
    const h = bare(host);
    const origin = `${protocol}//${net.isIPv6(h) ? `[${h}]` : h}:${port}`;
    const frames = (stack ?? '').split('\n').slice(1).filter((line) => !/\(node:|at node:|useproxy\.[jt]s/.test(line));
    found.push(`${what} connection to ${origin} went around the proxy (to ${socket.remoteAddress}:${socket.remotePort}, ` +
      `not ${proxy.host})${frames.length > 0 ? `, made\n${frames.join('\n')}` : ''}`);
  };
  // The code that made a request or a socket: 'http.client.request.created'
  // (newer Node) and 'net.client.socket' are published synchronously in
  // the caller's stack, unlike the channels that say where it connected.
  const stacks = new WeakMap<object, string | undefined>();
  const onCreated = (message: unknown): void => {
    const { request, socket } = message as { request?: object; socket?: object };
    const key = request ?? socket;
    if (key) stacks.set(key, new Error().stack);
  };

  const onUndici = (message: unknown): void => {
    const { connectParams: c, socket } = message as { connectParams: { protocol: string; hostname: string; port: string | number }; socket: net.Socket };
    check('fetch (undici)', c.protocol, c.hostname, Number(c.port) || defaultPort(c.protocol), socket, stacks.get(socket));
  };
  const onHTTP = (message: unknown): void => {
    const { request } = message as { request: http.ClientRequest & { socketPath?: string } };
    if (request.socketPath) return;
    const protocol = request.protocol || 'http:';
    // Where it connected (request.host, the socket's port), never the Host
    // header, which a request sets as it likes.
    const host = request.host || 'localhost';
    const watch = (socket: net.Socket): void => {
      const run = (): void => check('node:' + protocol.slice(0, -1), protocol, host, socket.remotePort ?? defaultPort(protocol), socket,
        stacks.get(request) ?? stacks.get(socket));
      if (socket.remoteAddress) run();
      else socket.once('connect', run);
    };
    if (request.socket) watch(request.socket);
    else request.once('socket', watch);
  };
  dc.subscribe('undici:client:connected', onUndici);
  dc.subscribe('http.client.request.start', onHTTP);
  dc.subscribe('http.client.request.created', onCreated);
  dc.subscribe('net.client.socket', onCreated);
  return () => {
    dc.unsubscribe('http.client.request.created', onCreated);
    dc.unsubscribe('net.client.socket', onCreated);
    dc.unsubscribe('undici:client:connected', onUndici);
    dc.unsubscribe('http.client.request.start', onHTTP);
  };
}

