/*
 * CObserverCore status codes, and the build settings every part of the C API
 * shares: nullability annotations and debug-build consistency checks.
 */
#ifndef OC_STATUS_H
#define OC_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Nullability (Clang only; empty for other compilers). Every pointer in the
 * C API is non-NULL unless marked OC_NULLABLE; Swift imports them as
 * non-optional and optional respectively.
 */
#if defined(__clang__)
#define OC_ASSUME_NONNULL_BEGIN _Pragma("clang assume_nonnull begin")
#define OC_ASSUME_NONNULL_END _Pragma("clang assume_nonnull end")
#define OC_NULLABLE _Nullable
#else
#define OC_ASSUME_NONNULL_BEGIN
#define OC_ASSUME_NONNULL_END
#define OC_NULLABLE
#endif

/*
 * Open and close every header's declarations (internal to the headers): C
 * linkage for C++, and the nullability default above.
 */
#ifdef __cplusplus
#define OC__DECLS_BEGIN extern "C" { OC_ASSUME_NONNULL_BEGIN
#define OC__DECLS_END OC_ASSUME_NONNULL_END }
#else
#define OC__DECLS_BEGIN OC_ASSUME_NONNULL_BEGIN
#define OC__DECLS_END OC_ASSUME_NONNULL_END
#endif

/*
 * Debug-build consistency checks (in the spirit of swift-collections'):
 * misuse that the release send path does not pay to detect (a view taken
 * outside a read section, a NULL list on the send path, oc_read_end on the
 * wrong thread) is reported and aborts the process. On by default in
 * unoptimized builds (no __OPTIMIZE__: SwiftPM debug builds, C and Swift
 * alike, since Swift's Clang importer compiles the inline functions at the
 * Swift build's optimization level); define OC_DEBUG_CHECKS to 0 or 1 to
 * choose. The out-of-line parts follow the setting they were compiled with.
 */
#ifndef OC_DEBUG_CHECKS
#if defined(__OPTIMIZE__)
#define OC_DEBUG_CHECKS 0
#else
#define OC_DEBUG_CHECKS 1
#endif
#endif

OC__DECLS_BEGIN

typedef enum oc_status {
	OC_OK = 0,
	/* An allocation failed; nothing was changed. */
	OC_ENOMEM = 1,
	/* A NULL list, map, context or out-pointer was passed. */
	OC_EINVAL = 2,
	/* The list holds OC_LIST_MAX_SLOTS contexts already. */
	OC_EFULL = 3,
	/* The handle is stale, foreign, or was never issued: nothing removed. */
	OC_ENOENT = 4,
	/* Waiting was requested from inside a read section on this thread (for
	 * example from an observer callback), where it would never return. */
	OC_EINSECTION = 5,
	/* A non-blocking writer call found the list's writer lock taken. */
	OC_EBUSY = 6,
	/* The process has issued every handle sequence number (2^64 - 2 adds;
	 * centuries at any achievable add rate): nothing was added. */
	OC_EEXHAUSTED = 7
} oc_status_t;

/* Returns a static, human-readable description of a status code. */
const char *oc_status_string(oc_status_t status);

/*
 * Reports a failed debug-build consistency check: prints `what` to stderr,
 * counts it, and aborts unless a test switched that off (oc_testing.h).
 * Called by OC_DEBUG_CHECK only; any thread.
 */
void oc__check_failed(const char *what);

#if OC_DEBUG_CHECKS
#define OC_DEBUG_CHECK(condition, what)                                        \
	do {                                                                   \
		if (!(condition))                                              \
			oc__check_failed(what);                                \
	} while (0)
#else
#define OC_DEBUG_CHECK(condition, what) ((void)0)
#endif

OC__DECLS_END

#endif /* OC_STATUS_H */
