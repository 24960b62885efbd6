// Runs the HTTP caching test suite (github.com/http-tests/cache-tests) in its private-cache mode — the one its
// published browser results use — against a base URL, and prints the figures the way cache-tests.fyi counts them
// (dependencies honoured). Called by Scripts/cache-conformance; uses the suite's own runner and result rules.
//
// Usage: node Scripts/cache-conformance.mjs SUITE BASE-URL [--json FILE] [--id TEST-ID] [--list]
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const [suite, base, ...rest] = process.argv.slice(2)
if (!suite || !base) {
  console.error('usage: cache-conformance.mjs SUITE BASE-URL [--json FILE] [--id TEST-ID] [--list]')
  process.exit(2)
}
const option = name => {
  const index = rest.indexOf(name)
  return index >= 0 ? rest[index + 1] : undefined
}
const load = file => import(pathToFileURL(path.join(suite, file)).href)
const { runTests, getResults } = await load('test-engine/client/runner.mjs')
const { determineTestResult, resultTypes } = await load('test-engine/lib/results.mjs')
const testSuites = (await load('tests/index.mjs')).default

const only = option('--id')
let selected = testSuites
if (only) {
  selected = testSuites
    .map(s => ({ ...s, tests: s.tests.filter(t => t.id === only).map(t => ({ ...t, dump: true })) }))
    .filter(s => s.tests.length > 0)
  if (selected.length === 0) {
    console.error(`no test ${only}`)
    process.exit(2)
  }
}
// `true`: the private (browser) cache mode: browser-only tests run, CDN-only and browser-skipped ones do not, and
// requests carry no cache-busting fields.
await runTests(selected, true, base)
const results = getResults()
const json = option('--json')
if (json) fs.writeFileSync(json, JSON.stringify(results, null, 2))

const names = new Map([
  [resultTypes.pass, 'passed'], [resultTypes.fail, 'failed'], [resultTypes.optional_fail, 'optional-failed'],
  [resultTypes.setup_fail, 'setup errors'], [resultTypes.yes, 'checks yes'], [resultTypes.no, 'checks no'],
  [resultTypes.dependency_fail, 'dependency failed'], [resultTypes.harness_fail, 'harness errors'],
  [resultTypes.retry, 'retried'], [resultTypes.untested, 'untested']
])
const counts = new Map([...names.values()].map(name => [name, 0]))
const listed = []
for (const id of Object.keys(results)) {
  const name = names.get(determineTestResult(testSuites, id, results))
  counts.set(name, counts.get(name) + 1)
  if (['failed', 'optional-failed', 'setup errors', 'harness errors', 'retried'].includes(name)) {
    listed.push(`${name.padEnd(16)} ${id}: ${[].concat(results[id]).slice(1).join(' ')}`)
  }
}
if (only || rest.includes('--list')) listed.sort().forEach(line => console.log(line))
console.log(`${Object.keys(results).length} tests (private cache mode): ` +
  [...counts].filter(([, n]) => n > 0).map(([name, n]) => `${name} ${n}`).join(', '))
