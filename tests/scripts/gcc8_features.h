/* Forced include (-include) for make cross-check: a GCC 8-era vendor compiler's feature
 * set on today's gcc and clang. Our sources must not use what GCC 8 lacks:
 * __builtin_convertvector (GCC 9), __builtin_shufflevector (GCC 12; but under clang,
 * which has had it since its first releases, as a clang of GCC 8's time had), _Float16
 * on targets without half arithmetic, __has_builtin (GCC 10). Where a source tests the
 * compiler's version it takes its GCC 8 branch (make test runs the half conversions so).
 * The host's own headers test for some of these, so they are read first (their include
 * guards keep them from being read again) and only then are the names poisoned. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
/* __has_builtin is a macro today: poisoning it warns, so this header counts as a system
 * header (no warnings) from here on; the poison still applies to every other file. */
#pragma GCC system_header
#undef __FLT16_MAX__
#pragma GCC poison __builtin_convertvector _Float16 __has_builtin
#if !defined(__clang_major__)
#pragma GCC poison __builtin_shufflevector
#endif
/* And the compiler says it is a GCC 8, so that a version test takes its GCC 8 branch. */
#undef __clang__
#undef __GNUC__
#define __GNUC__ 8
