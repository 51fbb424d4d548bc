// Reads the per-scenario checks.json files the conformance suite wrote and
// prints one verdict per scenario plus a closing "N passed, N failed" line for
// the scenarios the revision requires. The suite's own "Total:" line also
// counts extension scenarios that are never scored, which would misreport a
// conforming run as failing.
//
// usage: node conformance-summary.mjs SUITE_DIR REVISION RESULTS_DIR [EXTRA...]
// EXTRA names scenarios to gate on as well (e.g. pending header validation).
// Exit status: 0 when there is a gated scenario, and every one ran and has no FAILURE check.
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const [suiteDir, revision, resultsDir, ...extra] = process.argv.slice(2);
const require = createRequire(resolve(suiteDir, 'package.json'));
const YAML = require('yaml');

const reqs = YAML.parse(
  readFileSync(join(suiteDir, 'requirements', `${revision}.yaml`), 'utf8')
);
const gated = [...new Set([...(reqs.server ?? []), ...extra])];
// Nothing to gate on means the requirements were not read as meant: a pass would check nothing.
if (gated.length === 0) {
  console.log(`FAIL: ${revision} lists no required server scenario and none was added to gate on`);
  process.exit(1);
}
const dirs = readdirSync(resultsDir);

// Result folders are named server-<scenario>-<ISO timestamp>; a scenario name
// can be a prefix of another, so the timestamp anchors the match.
function checksFor(scenario) {
  const re = new RegExp(`^server-${scenario.replace(/[/]/g, '-')}-\\d{4}-\\d\\d-\\d\\dT`);
  const dir = dirs.filter((d) => re.test(d)).sort().pop();
  if (!dir) return undefined;
  return JSON.parse(readFileSync(join(resultsDir, dir, 'checks.json'), 'utf8'));
}

function clip(s, n = 300) {
  const one = String(s ?? '').replace(/\s+/g, ' ');
  return one.length > n ? `${one.slice(0, n)}…` : one;
}

let passed = 0;
let failed = 0;
for (const scenario of gated) {
  const checks = checksFor(scenario);
  if (!checks) {
    failed++;
    console.log(`FAIL ${scenario}: no results (scenario did not run)`);
    continue;
  }
  const bad = checks.filter((c) => c.status === 'FAILURE');
  if (bad.length === 0) {
    passed++;
    continue;
  }
  failed++;
  console.log(`FAIL ${scenario}`);
  for (const c of bad) {
    console.log(`     ${c.id}: ${clip(c.errorMessage ?? c.description)}`);
  }
}
console.log(`conformance ${revision}: ${gated.length} gated scenarios`);
console.log(`conformance: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
