// A program that installs fetch's dispatcher itself, an Agent that knows
// no proxy: its fetches go around the proxy.
const { Agent, setGlobalDispatcher } = require('undici');
setGlobalDispatcher(new Agent());

fetch(process.argv[2]).then(async (r) => {
  console.log('x-agentvcr: ' + r.headers.get('x-agentvcr') + '\n' + await r.text());
}).catch((e) => { console.error(String(e)); process.exit(1); });
