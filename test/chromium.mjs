// Debian's chromium driven by playwright-core, for the tests that need a real browser (the
// dashboard, examples/web). Fails (does not skip) when chromium is missing: npm test's pretest
// step (scripts/test-prerequisites.mjs) installs it.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'

const CHROMIUM = '/usr/bin/chromium'
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export async function launchChromium() {
  assert.ok(
    existsSync(CHROMIUM),
    `${CHROMIUM} is missing: apt-get install -y chromium (npm test's pretest and .ci/run do)`,
  )
  const { chromium } = await import('playwright-core')
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS })
}
