// docs/proxy.md's snippet for a Node program that sets fetch's dispatcher
// itself: undici's EnvHttpProxyAgent reads HTTPS_PROXY and NO_PROXY, and
// Node trusts the proxy's CA through NODE_EXTRA_CA_CERTS.
const { EnvHttpProxyAgent, setGlobalDispatcher } = require('undici');
setGlobalDispatcher(new EnvHttpProxyAgent());

fetch(process.argv[2]).then(async (r) => {
  console.log('x-agentvcr: ' + r.headers.get('x-agentvcr') + '\n' + await r.text());
}).catch((e) => { console.error(e); process.exit(1); });
