// Sanitizer settings compiled into every instrumented test and fuzz binary, so each runs the same
// way under ctest, make or by hand, with no environment to remember. The sanitizer runtimes call
// these hooks at start-up; LSAN_OPTIONS / ASAN_OPTIONS / UBSAN_OPTIONS still override them.
#include <cstdlib>

#ifndef EOV_LSAN_SUPPRESSIONS
#error "EOV_LSAN_SUPPRESSIONS must name tests/sanitizers/lsan.supp"
#endif

#define EOV_SANITIZER_HOOK extern "C" __attribute__((visibility("default"), used))

// OpenVINO is not instrumented and is built without frame pointers, so the fast unwinder stops at
// its first frame. The tests use the slow one, which walks OpenVINO's unwind tables far enough (16
// frames) for the leak suppressions to name OpenVINO's functions rather than the whole library.
// The fuzzers keep the fast one: it makes them 8 times faster, and they never run inference, where
// the one suppressed leak is.
#ifdef EOV_FAST_UNWIND
#define EOV_UNWIND "fast_unwind_on_malloc=1"
#else
#define EOV_UNWIND "fast_unwind_on_malloc=0:malloc_context_size=16"
#endif

// intercept_tls_get_addr=0: the sanitizers' own record of dynamically allocated thread-local
// storage goes wrong with a library OpenVINO's GPU plugin loads (libOpenCL.so.1, present once Wine is
// installed), and LeakSanitizer then crashes at exit scanning a range that is not there ("Tracer
// caught signal 11"), in some builds of a test binary and not others. Without the record, those
// blocks are still found through glibc's own table of them, so no leak goes unseen and none is
// reported falsely (the whole suite is clean with it).
EOV_SANITIZER_HOOK const char* __asan_default_options() {
  return EOV_UNWIND ":detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:"
                    "detect_leaks=1:intercept_tls_get_addr=0";
}

EOV_SANITIZER_HOOK const char* __lsan_default_options() {
  return "suppressions=" EOV_LSAN_SUPPRESSIONS ":print_suppressions=1";
}

EOV_SANITIZER_HOOK const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

namespace {

// OpenVINO's TBB opens its topology helper (libtbbbind) with RTLD_DEEPBIND, which AddressSanitizer
// refuses (it would bypass the sanitizer's malloc); TBB skips the flag when this is set. TBB is
// loaded only when the delegate first opens OpenVINO, long after this runs.
[[maybe_unused]] const bool tbb_told = ::setenv("TBB_ENABLE_SANITIZERS", "1", 0) == 0;

}  // namespace
