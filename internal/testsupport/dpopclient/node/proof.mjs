// Makes DPoP key pairs and proofs with panva's dpop library for the gateway's tests, one JSON
// request per line on stdin, one JSON answer per line on stdout:
//
//   {"id":1,"op":"key","alg":"ES256"}
//     → {"id":1,"key":"k1","jkt":"<RFC 7638 thumbprint>","jwk":{<private JWK>}}
//   {"id":2,"op":"proof","key":"k1","htm":"POST","htu":"https://…","nonce":"…","accessToken":"…",
//    "skew":-303,"claims":{…}}
//     → {"id":2,"proof":"<compact JWS>"}
//
// skew moves the library's clock by that many seconds while it makes the proof (its iat): the
// library sets iat itself and lets no claim override it.
//
// Errors answer {"id":…,"error":"…"}. The private JWK lets a test sign a deliberately broken proof
// with the same key; valid proofs come only from the library. DPOP_CLIENT_DIR is the directory
// whose node_modules holds the library (.ci/setup installs it into the cache).
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const dir = process.env.DPOP_CLIENT_DIR;
if (!dir) {
  console.error('dpopclient: DPOP_CLIENT_DIR is not set');
  process.exit(2);
}
const DPoP = await import(pathToFileURL(createRequire(resolve(dir, 'package.json')).resolve('dpop')).href);

const keys = new Map();
const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');

async function handle(req) {
  switch (req.op) {
    case 'key': {
      const kp = await DPoP.generateKeyPair(req.alg || 'ES256', { extractable: true });
      const key = 'k' + (keys.size + 1);
      keys.set(key, kp);
      const jkt = await DPoP.calculateThumbprint(kp.publicKey);
      const jwk = await crypto.subtle.exportKey('jwk', kp.privateKey);
      return { key, jkt, jwk };
    }
    case 'proof': {
      const kp = keys.get(req.key);
      if (!kp) throw new Error('unknown key ' + req.key);
      const now = Date.now;
      if (req.skew) Date.now = () => now() + req.skew * 1000;
      try {
        const proof = await DPoP.generateProof(kp, req.htu, req.htm, req.nonce || undefined,
          req.accessToken || undefined, req.claims || undefined);
        return { proof };
      } finally {
        Date.now = now;
      }
    }
    default:
      throw new Error('unknown op ' + req.op);
  }
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  let req = {};
  try {
    req = JSON.parse(line);
    out({ id: req.id, ...(await handle(req)) });
  } catch (e) {
    out({ id: req.id, error: String(e && e.message || e) });
  }
}
