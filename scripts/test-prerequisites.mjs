// `npm test`'s pretest step: the suite needs two Debian packages besides the build.
//   sqlcipher  test/encryption.test.mjs reads and writes files with SQLCipher's own tool
//   chromium   test/site.test.mjs drives /usr/bin/chromium to check the benchmark dashboard
// Installs what is missing with apt-get when running as root on a system that has it;
// otherwise stops at once with the command to run, so no test is skipped or fails for it.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'

const onPath = (cmd) => {
  try {
    execFileSync('/bin/sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const missingPackages = () =>
  [
    ['sqlcipher', onPath('sqlcipher')],
    ['chromium', existsSync('/usr/bin/chromium')],
  ]
    .filter(([, present]) => !present)
    .map(([name]) => name)

const missing = missingPackages()
if (missing.length > 0) {
  const install = `apt-get update && apt-get install -y ${missing.join(' ')}`
  if (process.getuid?.() === 0 && onPath('apt-get')) {
    console.log(`npm test needs Debian's ${missing.join(' and ')}: installing them (${install})`)
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    execFileSync('/bin/sh', ['-c', install], { stdio: 'inherit', env })
    const still = missingPackages()
    if (still.length > 0) fail(`apt-get ran but ${still.join(' and ')} is still missing.`)
  } else {
    fail(
      `npm test needs Debian's ${missing.join(' and ')} (see scripts/test-prerequisites.mjs for why). ` +
        `Install ${missing.length > 1 ? 'them' : 'it'}, then run npm test again:\n\n  sudo sh -c '${install}'\n`,
    )
  }
}

function fail(message) {
  console.error(message)
  process.exit(1)
}
