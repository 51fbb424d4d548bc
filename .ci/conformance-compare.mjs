// Compares two runs of the conformance suite over one revision's required server scenarios:
// the reference server on its own ("direct") and the gateway in front of it. Prints both
// counts side by side and every scenario that passes directly but not through the gateway.
//
// usage: node conformance-compare.mjs SUITE_DIR REVISION DIRECT_RESULTS GATEWAY_RESULTS [LABEL [REF_LABEL]]
// LABEL names the gateway leg in the output (default "gateway"), REF_LABEL the direct run
// (default "direct").
// Exit status: 0 when every scenario that passes directly passes through the gateway, and the
// direct run has a result for every scenario: without one there is nothing to compare, and a
// reference run that did not happen (or ran part of the set) would pass the gate vacuously.
import { createRequire } from 'node:module';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const [suiteDir, revision, directDir, gatewayDir, label = 'gateway', refLabel = 'direct'] = process.argv.slice(2);
const require = createRequire(resolve(suiteDir, 'package.json'));
const YAML = require('yaml');
const reqs = YAML.parse(readFileSync(join(suiteDir, 'requirements', `${revision}.yaml`), 'utf8'));
const scenarios = [...new Set(reqs.server ?? [])];

// verdicts maps each scenario to "pass", "fail" or "missing" for one results directory. Result
// folders are named server-<scenario>-<ISO timestamp>; the timestamp anchors the match, as a
// scenario name can be a prefix of another.
function verdicts(dir) {
  const dirs = existsSync(dir) ? readdirSync(dir) : [];
  const out = new Map();
  for (const s of scenarios) {
    const re = new RegExp(`^server-${s.replace(/[/]/g, '-')}-\\d{4}-\\d\\d-\\d\\dT`);
    const found = dirs.filter((d) => re.test(d)).sort().pop();
    if (!found) {
      out.set(s, 'missing');
      continue;
    }
    const checks = JSON.parse(readFileSync(join(dir, found, 'checks.json'), 'utf8'));
    out.set(s, checks.some((c) => c.status === 'FAILURE') ? 'fail' : 'pass');
  }
  return out;
}

function count(v) {
  const passed = [...v.values()].filter((x) => x === 'pass').length;
  return `${passed} passed / ${v.size - passed} failed`;
}

const direct = verdicts(directDir);
const gateway = verdicts(gatewayDir);
const lost = scenarios.filter((s) => direct.get(s) === 'pass' && gateway.get(s) !== 'pass');
const gained = scenarios.filter((s) => direct.get(s) !== 'pass' && gateway.get(s) === 'pass');
for (const s of scenarios) {
  if (direct.get(s) !== 'pass' || gateway.get(s) !== 'pass') {
    console.log(`  ${s}: ${refLabel} ${direct.get(s)}, ${label} ${gateway.get(s)}`);
  }
}
console.log(`conformance ${revision} (${scenarios.length} required server scenarios): ` +
  `${refLabel}: ${count(direct)}; ${label}: ${count(gateway)}`);
if (gained.length > 0) console.log(`passing only through the ${label}: ${gained.join(', ')}`);
const unrun = scenarios.filter((s) => direct.get(s) === 'missing');
if (scenarios.length === 0 || unrun.length > 0) {
  console.log(`FAIL: the ${refLabel} run has no result for ${unrun.length > 0 ? unrun.join(', ') : `any scenario (${revision} lists none)`}: nothing to compare the ${label} with`);
  process.exit(1);
}
if (lost.length > 0) {
  console.log(`FAIL: passing directly but not through the ${label}: ${lost.join(', ')}`);
  process.exit(1);
}
console.log(`every scenario that passes directly passes through the ${label}`);
