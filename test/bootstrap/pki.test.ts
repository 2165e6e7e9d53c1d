import t from 'tap';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { ensureAdminToken, ensurePki, writeAdminKubeconfig } from '../../src/bootstrap/pki.js';

const execFileAsync = promisify(execFile);

const VERSION_BODY = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0',
  gitCommit: 'x',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T17:59:15Z',
  goVersion: 'go1.23',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function mode(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

async function listen(server: https.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

function close(server: https.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

t.test('ensurePki creates, reuses and re-issues', async (t) => {
  const dir = t.testdir();
  const start = process.hrtime.bigint();
  const pki = ensurePki(dir, ['0.0.0.0', '::']);
  const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  t.comment(`first ensurePki took ${elapsedMs.toFixed(0)} ms`);

  const pkiDir = path.join(dir, 'pki');
  for (const f of ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key']) {
    t.ok(fs.existsSync(path.join(pkiDir, f)), `${f} exists`);
  }
  t.equal(pki.caFile, path.join(pkiDir, 'ca.crt'));
  t.equal(pki.certFile, path.join(pkiDir, 'apiserver.crt'));
  t.equal(pki.keyFile, path.join(pkiDir, 'apiserver.key'));
  t.equal(pki.caCertPem, fs.readFileSync(pki.caFile, 'utf8'));
  t.equal(mode(path.join(pkiDir, 'ca.key')), 0o600, 'ca.key is 0600');
  t.equal(mode(pki.keyFile), 0o600, 'apiserver.key is 0600');

  const ca = new crypto.X509Certificate(pki.caCertPem);
  const serving = new crypto.X509Certificate(fs.readFileSync(pki.certFile));
  t.ok(ca.ca, 'CA cert is a CA');
  t.match(ca.subject, /CN=orch-ca/);
  t.ok(ca.verify(ca.publicKey), 'CA is self-signed');
  t.notOk(serving.ca, 'serving cert is not a CA');
  t.match(serving.subject, /CN=orch-apiserver/);
  t.match(serving.issuer, /CN=orch-ca/);
  t.ok(serving.verify(ca.publicKey), 'serving cert verifies against CA');
  t.ok(serving.checkIssued(ca), 'serving cert issued by CA');
  t.ok(serving.checkPrivateKey(crypto.createPrivateKey(fs.readFileSync(pki.keyFile))), 'key matches cert');
  t.equal(serving.checkHost('localhost'), 'localhost');
  t.equal(serving.checkHost('kubernetes.default.svc'), 'kubernetes.default.svc');
  t.equal(serving.checkIP('127.0.0.1'), '127.0.0.1');
  t.equal(serving.checkIP('::1'), '::1');
  t.equal(serving.checkIP('0.0.0.0'), undefined, 'wildcard bind address not in SAN');
  t.ok(serving.keyUsage?.includes('1.3.6.1.5.5.7.3.1'), 'extKeyUsage serverAuth');
  t.ok(/^[0-7]/.test(serving.serialNumber), 'serial is positive');
  const caLifeYears = (Date.parse(ca.validTo) - Date.parse(ca.validFrom)) / (365 * 86400e3);
  const servingLifeDays = (Date.parse(serving.validTo) - Date.parse(serving.validFrom)) / 86400e3;
  t.ok(caLifeYears > 9.9 && caLifeYears < 10.1, 'CA valid ~10 years');
  t.ok(servingLifeDays > 364 && servingLifeDays < 367, 'serving cert valid ~1 year');

  const caBytes = fs.readFileSync(pki.caFile);
  const caKeyBytes = fs.readFileSync(path.join(pkiDir, 'ca.key'));
  const certBytes = fs.readFileSync(pki.certFile);
  const keyBytes = fs.readFileSync(pki.keyFile);

  const again = ensurePki(dir, []);
  t.same(again, pki, 'second call returns same paths and CA');
  t.ok(fs.readFileSync(pki.caFile).equals(caBytes), 'CA cert unchanged');
  t.ok(fs.readFileSync(pki.certFile).equals(certBytes), 'serving cert unchanged');
  t.ok(fs.readFileSync(pki.keyFile).equals(keyBytes), 'serving key unchanged');

  // New host: only the serving cert is re-issued, with the same CA.
  const reissued = ensurePki(dir, ['10.1.2.3', 'orch.example.test', '[fd00::7]']);
  t.ok(fs.readFileSync(pki.caFile).equals(caBytes), 'CA cert unchanged after re-issue');
  t.ok(fs.readFileSync(path.join(pkiDir, 'ca.key')).equals(caKeyBytes), 'CA key unchanged after re-issue');
  t.equal(reissued.caCertPem, pki.caCertPem);
  const newCertBytes = fs.readFileSync(pki.certFile);
  t.notOk(newCertBytes.equals(certBytes), 'serving cert re-issued');
  const newServing = new crypto.X509Certificate(newCertBytes);
  t.ok(newServing.verify(ca.publicKey), 're-issued cert verifies against same CA');
  t.equal(newServing.checkIP('10.1.2.3'), '10.1.2.3');
  t.equal(newServing.checkIP('fd00::7'), 'fd00::7');
  t.equal(newServing.checkHost('orch.example.test'), 'orch.example.test');
  t.equal(newServing.checkHost('localhost'), 'localhost');
  t.not(newServing.serialNumber, serving.serialNumber, 'new serial');
  t.equal(mode(pki.keyFile), 0o600, 'apiserver.key still 0600');

  // Same hosts again: stable.
  ensurePki(dir, ['10.1.2.3', 'orch.example.test', 'fd00::7']);
  t.ok(fs.readFileSync(pki.certFile).equals(newCertBytes), 'no re-issue when hosts already covered');
});

t.test('https server with the serving cert is trusted via the CA', async (t) => {
  const dir = t.testdir();
  const pki = ensurePki(dir, []);
  const server = https.createServer(
    { cert: fs.readFileSync(pki.certFile), key: fs.readFileSync(pki.keyFile) },
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    },
  );
  const port = await listen(server);
  t.teardown(() => close(server));

  for (const host of ['127.0.0.1', 'localhost']) {
    const body = await new Promise<string>((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', servername: host === 'localhost' ? 'localhost' : undefined, port, path: '/', ca: pki.caCertPem, headers: { host } }, (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (data += c));
          res.on('end', () => resolve(data));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    t.equal(body, 'ok', `TLS verified for ${host}`);
  }
});

t.test('admin token and kubeconfig', async (t) => {
  const dir = t.testdir();
  const token = ensureAdminToken(dir);
  t.match(token, /^[A-Za-z0-9_-]{43}$/, '32-byte base64url token');
  t.equal(Buffer.from(token, 'base64url').length, 32);
  t.equal(mode(path.join(dir, 'admin-token')), 0o600, 'admin-token is 0600');
  t.equal(ensureAdminToken(dir), token, 'token reused');

  const pki = ensurePki(dir, []);
  const file = writeAdminKubeconfig(dir, 'https://127.0.0.1:6443', pki.caCertPem, token);
  t.equal(file, path.join(dir, 'admin.kubeconfig'));
  t.equal(mode(file), 0o600, 'kubeconfig is 0600');
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  t.match(cfg, {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'orch',
    clusters: [{ name: 'orch', cluster: { server: 'https://127.0.0.1:6443' } }],
    users: [{ name: 'orch-admin', user: { token } }],
    contexts: [{ name: 'orch', context: { cluster: 'orch', user: 'orch-admin', namespace: 'default' } }],
  });
  t.equal(Buffer.from(cfg.clusters[0].cluster['certificate-authority-data'], 'base64').toString('utf8'), pki.caCertPem);

  writeAdminKubeconfig(dir, 'https://127.0.0.1:7443', pki.caCertPem, token);
  const cfg2 = JSON.parse(fs.readFileSync(file, 'utf8'));
  t.equal(cfg2.clusters[0].cluster.server, 'https://127.0.0.1:7443', 'rewritten with new URL');
});

t.test('real kubectl accepts the kubeconfig, CA and token', async (t) => {
  const dir = t.testdir({ home: {} });
  const pki = ensurePki(dir, []);
  const token = ensureAdminToken(dir);
  const seenAuth: string[] = [];
  const seenPaths: string[] = [];
  const server = https.createServer(
    { cert: fs.readFileSync(pki.certFile), key: fs.readFileSync(pki.keyFile) },
    (req, res) => {
      seenAuth.push(String(req.headers.authorization));
      const pathname = new URL(req.url ?? '/', 'https://x').pathname;
      seenPaths.push(pathname);
      if (req.headers.authorization !== `Bearer ${token}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 }));
        return;
      }
      if (req.method === 'GET' && pathname === '/version') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(VERSION_BODY));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
    },
  );
  const port = await listen(server);
  t.teardown(() => close(server));

  const kubeconfig = writeAdminKubeconfig(dir, `https://127.0.0.1:${port}`, pki.caCertPem, token);
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: path.join(dir, 'home') };
  delete env.KUBECONFIG;
  const { stdout } = await execFileAsync('kubectl', ['--kubeconfig', kubeconfig, 'version', '-o', 'json'], {
    env,
    timeout: 60_000,
  });
  const out = JSON.parse(stdout);
  t.equal(out.serverVersion?.gitVersion, 'v1.32.0', 'kubectl saw the server version');
  t.ok(seenAuth.length > 0 && seenAuth.every((a) => a === `Bearer ${token}`), 'kubectl sent the bearer token');
  t.ok(seenPaths.includes('/version'), 'kubectl called /version');

  // Also via the DNS name in the SAN.
  const kubeconfig2 = writeAdminKubeconfig(dir, `https://localhost:${port}`, pki.caCertPem, token);
  const r2 = await execFileAsync('kubectl', ['--kubeconfig', kubeconfig2, 'version', '-o', 'json'], { env, timeout: 60_000 });
  t.equal(JSON.parse(r2.stdout).serverVersion?.gitVersion, 'v1.32.0', 'kubectl via localhost');
});
