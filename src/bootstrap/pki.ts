// Owns the on-disk bootstrap credentials: cluster CA, apiserver serving cert, admin token and admin kubeconfig.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import forge from 'node-forge';

export interface Pki {
  caCertPem: string;
  certFile: string;
  keyFile: string;
  caFile: string;
}

const CA_CN = 'orch-ca';
const SERVING_CN = 'orch-apiserver';
const CA_VALIDITY_YEARS = 10;
const SERVING_VALIDITY_YEARS = 1;
/** Backdate notBefore to tolerate small clock skew between host and clients. */
const BACKDATE_MS = 60 * 60 * 1000;
/** Re-issue the serving cert when it expires within this window. */
const RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000;

const DEFAULT_DNS = ['localhost', 'orch-apiserver', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'];
const DEFAULT_IPS = ['127.0.0.1', '::1'];

interface KeyPairPem {
  privateKeyPem: string;
  publicKeyPem: string;
}

interface SanSet {
  dns: string[];
  ips: string[];
}

/** Write a file atomically (tmp + rename) with the given mode. */
function writeFileAtomic(file: string, data: string, mode: number): void {
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, data, { mode });
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, file);
}

function generateRsaKeyPair(): KeyPairPem {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicExponent: 0x10001,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/** Derive the SPKI public key PEM from a private key PEM. */
function publicPemFromPrivate(privateKeyPem: string): string {
  return crypto.createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' }).toString();
}

/** Random positive serial number as hex (high bit of the first byte cleared, never zero). */
function randomSerialHex(): string {
  const bytes = crypto.randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function addYears(d: Date, years: number): Date {
  const out = new Date(d.getTime());
  out.setUTCFullYear(out.getUTCFullYear() + years);
  return out;
}

/** Normalise requested hosts into DNS names and IP addresses (wildcard bind addresses skipped). */
function collectSans(hosts: string[]): SanSet {
  const dns = new Set<string>(DEFAULT_DNS);
  const ips = new Set<string>(DEFAULT_IPS);
  for (const raw of hosts) {
    let h = raw.trim();
    if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
    if (h === '' || h === '0.0.0.0' || h === '::') continue;
    if (net.isIP(h) !== 0) ips.add(h);
    else dns.add(h.toLowerCase());
  }
  return { dns: [...dns], ips: [...ips] };
}

function createCaCert(keys: KeyPairPem): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = randomSerialHex();
  const now = new Date();
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = addYears(now, CA_VALIDITY_YEARS);
  const subject = [{ name: 'commonName', value: CA_CN }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privateKeyPem), forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

function createServingCert(keys: KeyPairPem, caCertPem: string, caKeyPem: string, sans: SanSet): string {
  const caCert = forge.pki.certificateFromPem(caCertPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = randomSerialHex();
  const now = new Date();
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  let notAfter = addYears(now, SERVING_VALIDITY_YEARS);
  if (notAfter.getTime() > caCert.validity.notAfter.getTime()) notAfter = caCert.validity.notAfter;
  cert.validity.notAfter = notAfter;
  cert.setSubject([{ name: 'commonName', value: SERVING_CN }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        ...sans.dns.map((value) => ({ type: 2, value })),
        ...sans.ips.map((ip) => ({ type: 7, ip })),
      ],
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(caKeyPem), forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

/** True when the existing serving cert is usable as-is for the requested SANs with this CA. */
function servingCertUsable(certPem: string, keyPem: string, caCertPem: string, sans: SanSet): boolean {
  let cert: crypto.X509Certificate;
  let ca: crypto.X509Certificate;
  try {
    cert = new crypto.X509Certificate(certPem);
    ca = new crypto.X509Certificate(caCertPem);
    if (!cert.checkPrivateKey(crypto.createPrivateKey(keyPem))) return false;
  } catch {
    return false;
  }
  if (!cert.verify(ca.publicKey)) return false;
  if (new Date(cert.validTo).getTime() - Date.now() < RENEW_BEFORE_MS) return false;
  for (const ip of sans.ips) if (cert.checkIP(ip) === undefined) return false;
  for (const dns of sans.dns) if (cert.checkHost(dns, { wildcards: false }) === undefined) return false;
  return true;
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Ensure `<dataDir>/pki` holds a CA and an apiserver serving cert covering `hosts`.
 * Existing files are reused; only the serving cert is re-issued (with the same CA) when it
 * lacks a requested host, is close to expiry, or does not chain to the CA on disk.
 */
export function ensurePki(dataDir: string, hosts: string[]): Pki {
  const dir = path.join(dataDir, 'pki');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const caFile = path.join(dir, 'ca.crt');
  const caKeyFile = path.join(dir, 'ca.key');
  const certFile = path.join(dir, 'apiserver.crt');
  const keyFile = path.join(dir, 'apiserver.key');
  const sans = collectSans(hosts);

  let caCertPem = readIfExists(caFile);
  let caKeyPem = readIfExists(caKeyFile);
  if (caCertPem === undefined || caKeyPem === undefined) {
    const caKeys = generateRsaKeyPair();
    caKeyPem = caKeys.privateKeyPem;
    caCertPem = createCaCert(caKeys);
    writeFileAtomic(caKeyFile, caKeyPem, 0o600);
    writeFileAtomic(caFile, caCertPem, 0o644);
  }

  const certPem = readIfExists(certFile);
  const keyPem = readIfExists(keyFile);
  if (certPem === undefined || keyPem === undefined || !servingCertUsable(certPem, keyPem, caCertPem, sans)) {
    let keys: KeyPairPem;
    if (keyPem !== undefined) {
      try {
        keys = { privateKeyPem: keyPem, publicKeyPem: publicPemFromPrivate(keyPem) };
      } catch {
        keys = generateRsaKeyPair();
      }
    } else {
      keys = generateRsaKeyPair();
    }
    const newCertPem = createServingCert(keys, caCertPem, caKeyPem, sans);
    if (keys.privateKeyPem !== keyPem) writeFileAtomic(keyFile, keys.privateKeyPem, 0o600);
    writeFileAtomic(certFile, newCertPem, 0o644);
  }

  return { caCertPem, certFile, keyFile, caFile };
}

/** Return the admin bearer token from `<dataDir>/admin-token`, creating it on first call. */
export function ensureAdminToken(dataDir: string): string {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'admin-token');
  const existing = readIfExists(file)?.trim();
  if (existing) return existing;
  const token = crypto.randomBytes(32).toString('base64url');
  writeFileAtomic(file, `${token}\n`, 0o600);
  return token;
}

/** Write `<dataDir>/admin.kubeconfig` (JSON) for the admin user; rewritten on every start. Returns its path. */
export function writeAdminKubeconfig(dataDir: string, serverUrl: string, caCertPem: string, token: string): string {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'admin.kubeconfig');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [
      {
        name: 'orch',
        cluster: {
          server: serverUrl,
          'certificate-authority-data': Buffer.from(caCertPem, 'utf8').toString('base64'),
        },
      },
    ],
    users: [{ name: 'orch-admin', user: { token } }],
    contexts: [{ name: 'orch', context: { cluster: 'orch', user: 'orch-admin', namespace: 'default' } }],
    'current-context': 'orch',
  };
  writeFileAtomic(file, `${JSON.stringify(config, null, 2)}\n`, 0o600);
  return file;
}
