// agentvcr: send this Node process's HTTP(S) traffic through the recording
// proxy named by HTTPS_PROXY / HTTP_PROXY, and say so on stderr when a
// connection goes around it.
//
// proxy.Env (recorder env, the proxy's start line) writes this file beside
// the proxy's CA and loads it with NODE_OPTIONS=--require. It does three
// things, and nothing at all when no proxy is set:
//
//  1. fetch. Node 22.21+ and 24+ send fetch through the proxy themselves
//     when NODE_USE_ENV_PROXY=1 (Env sets it). Older Node ignores
//     HTTPS_PROXY and would go straight to the real service, so this file
//     makes fetch's global dispatcher tunnel through the proxy with CONNECT
//     (honouring NO_PROXY). It builds on the undici that Node bundles, so
//     nothing needs installing; a program that installs a dispatcher of its
//     own replaces this one.
//
//  2. node:http and node:https. Node 22.21+ / 24.5+ send them through the
//     proxy themselves when NODE_USE_ENV_PROXY=1. On older Node this file
//     replaces http.globalAgent and https.globalAgent with agents that
//     tunnel through the proxy with the same CONNECT code (honouring
//     NO_PROXY; TLS inside the tunnel trusts NODE_EXTRA_CA_CERTS, as every
//     TLS connection in this process does). A request with an Agent of its
//     own (a library's keep-alive agent, agent: false) is not routed.
//
//  3. A warning. Every HTTP connection this process opens (fetch or
//     node:http) to a host NO_PROXY does not exempt is checked: one that
//     does not land on the proxy (a dispatcher or an Agent the program
//     made itself) is reported on stderr, once per origin, since it may
//     have reached the real service unrecorded.
'use strict';

(() => {
  const loaded = Symbol.for('agentvcr.nodeProxy');
  if (globalThis[loaded]) return; // required twice: once is enough
  Object.defineProperty(globalThis, loaded, { value: true });

  const warned = new Set();
  const warnOnce = (key, message) => {
    if (warned.has(key)) return;
    warned.add(key);
    process.stderr.write(message + '\n');
  };

  // Lower case first, even empty, as undici reads them.
  const env = (name) => process.env[name.toLowerCase()] ?? process.env[name] ?? '';
  const proxies = {};
  for (const [scheme, value] of [['http:', env('HTTP_PROXY')], ['https:', env('HTTPS_PROXY') || env('HTTP_PROXY')]]) {
    if (!value) continue;
    try {
      const u = new URL(value);
      if (u.protocol === 'http:') proxies[scheme] = u;
      else warnOnce('proxy ' + value, `agentvcr: ${scheme.slice(0, -1).toUpperCase()}_PROXY=${value}: only an http:// proxy is supported here; fetch is not sent through it`);
    } catch {
      warnOnce('proxy ' + value, `agentvcr: cannot parse the proxy URL ${JSON.stringify(value)}; fetch is not sent through it`);
    }
  }
  if (!proxies['http:'] && !proxies['https:']) return;
  const net = require('node:net');
  const dc = require('node:diagnostics_channel');

  const bare = (host) => (host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host).toLowerCase();

  // NO_PROXY: names (a leading "." or "*." or none matches subdomains
  // too), IP addresses, an optional :port, or "*" for everything.
  const noProxy = env('NO_PROXY').split(/[\s,]+/).filter(Boolean).map((entry) => {
    let host = entry;
    let port = 0;
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry);
    if (m) [host, port] = [m[1], Number(m[2])];
    return { host: bare(host).replace(/^\*?\./, ''), port };
  });
  const exempt = (host, port) => {
    host = bare(host);
    return noProxy.some((e) => (e.port === 0 || e.port === port) &&
      (e.host === '*' || host === e.host || host.endsWith('.' + e.host)));
  };
  const defaultPort = (protocol) => (protocol === 'https:' ? 443 : 80);

  // A socket lands on the proxy when it is connected to the proxy's port
  // on the proxy's address (any loopback address for "localhost"; the port
  // alone for another name, which this file does not resolve).
  const onProxy = (socket) => Object.values(proxies).some((u) => {
    if (socket.remotePort !== Number(u.port || 80)) return false;
    const want = bare(u.hostname);
    const got = String(socket.remoteAddress || '').replace(/^::ffff:/, '');
    if (want === 'localhost') return got === '::1' || got.startsWith('127.');
    return net.isIP(want) ? got === want.replace(/^::ffff:/, '') : true;
  });

  // Names this machine only: localhost, 127.0.0.0/8, ::1.
  const isLoopback = (host) => {
    const h = bare(host).replace(/^::ffff:/, '');
    return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || (net.isIPv4(h) && h.startsWith('127.'));
  };

  const checkDirect = (what, protocol, host, port, socket) => {
    // No address: a Unix socket (the Docker API), not the network.
    if (!socket.remoteAddress || onProxy(socket)) return;
    // An exempt loopback name must also have connected to loopback.
    if (exempt(host, port) && (!isLoopback(host) || isLoopback(socket.remoteAddress))) return;
    const origin = `${protocol}//${net.isIPv6(bare(host)) ? `[${bare(host)}]` : bare(host)}:${port}`;
    const why = what.startsWith('fetch')
      ? 'A dispatcher the program installed replaced the proxy\'s: make it undici\'s EnvHttpProxyAgent'
      : 'node:http(s) goes through the proxy with its default agent (http.globalAgent, https.globalAgent), ' +
        'never with an Agent a library makes itself (or agent: false): give the library no agent of its own, ' +
        'or one that tunnels through HTTPS_PROXY';
    warnOnce(origin, `agentvcr: WARNING: ${what} connection to ${origin} went around the proxy ` +
      `(to ${socket.remoteAddress}:${socket.remotePort}, not ${Object.values(proxies).map((u) => u.host).join(' or ')}): ` +
      `it may have reached the real service, unrecorded. ${why}; see "Put an agent behind it" in agentvcr's docs/proxy.md.`);
  };
  dc.subscribe('undici:client:connected', ({ connectParams: c, socket }) => {
    checkDirect('fetch (undici)', c.protocol, c.hostname, Number(c.port) || defaultPort(c.protocol), socket);
  });
  dc.subscribe('http.client.request.start', ({ request }) => {
    const protocol = request.protocol || 'http:';
    // Where it connected (request.host, the socket's port), never the Host
    // header, which a request sets as it likes.
    const host = request.host || 'localhost';
    if (request.socketPath) return;
    const watch = (socket) => {
      const check = () => checkDirect('node:' + protocol.slice(0, -1), protocol, host, socket.remotePort || defaultPort(protocol), socket);
      if (socket.remoteAddress) check();
      else socket.once('connect', check);
    };
    if (request.socket) watch(request.socket);
    else request.once('socket', watch);
  });

  const [major, minor] = process.versions.node.split('.').map(Number);
  const useEnvProxy = process.env.NODE_USE_ENV_PROXY === '1';

  // tunnel opens a connection through the proxy to protocol//hostname:port:
  // CONNECT, then, for https, TLS to the origin inside it with tlsOptions
  // (trusting NODE_EXTRA_CA_CERTS, as every TLS connection in this process
  // does). callback(err, socket) gets the connection.
  const connectTimeout = 10_000;
  const tunnel = ({ protocol, hostname, port, servername }, tlsOptions, callback) => {
    const proxy = proxies[protocol];
    const host = bare(hostname);
    port = Number(port) || defaultPort(protocol);
    const authority = `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
    let auth = '';
    if (proxy.username) {
      const cred = decodeURIComponent(proxy.username) + ':' + decodeURIComponent(proxy.password);
      auth = `Proxy-Authorization: Basic ${Buffer.from(cred).toString('base64')}\r\n`;
    }
    let done = false;
    const finish = (err, socket) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) sock.destroy();
      callback(err, err ? null : socket);
    };
    const sock = net.connect({ host: bare(proxy.hostname), port: Number(proxy.port || 80) });
    const timer = setTimeout(() => finish(new Error(`agentvcr: the proxy at ${proxy.host} did not open a tunnel to ${authority} within ${connectTimeout / 1000} s`)), connectTimeout);
    timer.unref(); // the socket keeps the process alive while it connects
    sock.on('error', (err) => finish(err));
    sock.once('connect', () => sock.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`));
    let head = Buffer.alloc(0);
    const onReadable = () => {
      for (let chunk; (chunk = sock.read()) !== null;) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          if (head.length > 64 << 10) finish(new Error(`agentvcr: the proxy at ${proxy.host} sent no end to its answer to CONNECT ${authority}`));
          continue;
        }
        sock.removeListener('readable', onReadable);
        const rest = head.subarray(end + 4);
        if (rest.length > 0) sock.unshift(rest);
        const status = head.subarray(0, end).toString('latin1').split('\r\n')[0];
        if (!/^HTTP\/1\.[01] 200(?: |$)/.test(status)) {
          finish(new Error(`agentvcr: the proxy at ${proxy.host} answered CONNECT ${authority} with "${status}"`));
          return;
        }
        if (protocol !== 'https:') {
          finish(null, sock);
          return;
        }
        const name = servername || (net.isIP(host) ? undefined : host);
        const secure = require('node:tls').connect({ ...tlsOptions, socket: sock, host, servername: name });
        secure.once('secureConnect', () => finish(null, secure));
        secure.on('error', (err) => finish(err));
        return;
      }
    };
    sock.on('readable', onReadable);
  };

  // node:http(s): leave it to Node where Node does it.
  if (!(useEnvProxy && (major > 24 || major === 24 && minor >= 5 || major === 22 && minor >= 21))) {
    const http = require('node:http');
    const https = require('node:https');
    // An Agent's createConnection may answer through its callback: the
    // tunnel's socket once the proxy has opened it. Connections NO_PROXY
    // exempts, or for a scheme with no proxy, are the Agent's own.
    const tunnelling = (Base, protocol) => class extends Base {
      createConnection(options, callback) {
        const port = Number(options.port) || defaultPort(protocol);
        if (!proxies[protocol] || options.socketPath || exempt(options.host || 'localhost', port)) {
          return super.createConnection(options, callback);
        }
        const { host, port: _port, path: _path, socket: _socket, ...tlsOptions } = options;
        tunnel({ protocol, hostname: host || 'localhost', port, servername: options.servername }, tlsOptions, callback);
        return undefined;
      }
    };
    // The agents Node makes by default, with the same options.
    http.globalAgent = new (tunnelling(http.Agent, 'http:'))(http.globalAgent.options);
    https.globalAgent = new (tunnelling(https.Agent, 'https:'))(https.globalAgent.options);
  }

  // fetch: leave it to Node where Node does it, or where a dispatcher is
  // already installed before any code has run.
  const dispatcherKey = Symbol.for('undici.globalDispatcher.1');
  const nodeProxies = useEnvProxy && (major >= 24 || major === 22 && minor >= 21);
  if (nodeProxies || globalThis[dispatcherKey] !== undefined) return;
  // Loads Node's undici, which installs its Agent: a few milliseconds that
  // a process using fetch pays anyway. Later, a dispatcher already there
  // could not be told from one the program installed.
  void globalThis.Headers;
  const direct = globalThis[dispatcherKey];
  if (!direct || typeof direct.dispatch !== 'function') {
    warnOnce('no undici', `agentvcr: WARNING: Node ${process.version} has no fetch dispatcher to route; fetch may go around the proxy`);
    return;
  }
  const Agent = direct.constructor;

  class ProxyDispatcher extends Agent {
    dispatch(opts, handler) {
      const u = typeof opts.origin === 'string' ? new URL(opts.origin) : opts.origin;
      if (!proxies[u.protocol] || exempt(u.hostname, Number(u.port) || defaultPort(u.protocol))) {
        return direct.dispatch(opts, handler);
      }
      return super.dispatch(opts, handler);
    }
  }
  // As undici's setGlobalDispatcher does, so that a program may still
  // install its own.
  Object.defineProperty(globalThis, dispatcherKey, {
    value: new ProxyDispatcher({
      connect: (opts, callback) => tunnel(opts, { ALPNProtocols: ['http/1.1'] }, callback),
    }),
    writable: true,
    enumerable: false,
    configurable: false,
  });
})();
