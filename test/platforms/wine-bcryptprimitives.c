/* Test shim for wine 8 only (test/platforms/win32.test.mjs): Rust's standard library on Windows
 * takes random bytes from bcryptprimitives.dll's ProcessPrng, which Windows 10 and later have
 * and Debian's wine 8 lacks. This stand-in gets them from bcrypt.dll, which wine has. Never
 * shipped: it goes into the test's own wine prefix. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  return BCryptGenRandom(NULL, data, (ULONG)len, BCRYPT_USE_SYSTEM_PREFERRED_RNG) >= 0;
}
