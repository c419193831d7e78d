/*
 * membarrier (Linux): the reclaimer's side of unfenced read sections.
 * When MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED succeeds at initialization,
 * read sections drop their store-load fence (oc__section_enter in
 * include/oc_epoch.h) and every holder of the reclaim lock (oc_epoch.c)
 * issues MEMBARRIER_CMD_PRIVATE_EXPEDITED after handing retirements to
 * ck_epoch and before ck_epoch scans the records (oc__membarrier_before_scan):
 * once per scan or grace-period wait, never per send or per retirement. The
 * argument is in include/oc_epoch.h (oc__section_enter) and the
 * MemoryOrdering article. OBSERVER_CORE_MEMBARRIER=0 in the environment at
 * initialization keeps the fence (the fallback everywhere registration
 * fails, and on other systems).
 */
#include "oc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if OC__MEMBARRIER_POSSIBLE
/* See oc_epoch.h. Plain bool, loaded relaxed by readers. */
bool oc__membarrier_active;
#endif
/* Private expedited membarriers issued; relaxed: a statistic for tests. */
static uint64_t oc_stat_membarriers;

#if OC__MEMBARRIER_POSSIBLE
/*
 * The membarrier system call with `command`: its result (-1 with errno on
 * failure).
 */
static long
oc_membarrier(int command)
{
	return syscall(SYS_membarrier, command, 0);
}

/* True when the expedited private barrier is available and registered. */
static bool
oc_membarrier_register(void)
{
	long commands = oc_membarrier(MEMBARRIER_CMD_QUERY);

	if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
		return false;
	return oc_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}
#endif

/*
 * At initialization, before any thread has a record: chooses how read
 * sections are ordered (see oc__membarrier_active). The environment
 * variable OBSERVER_CORE_MEMBARRIER=0 forces the fenced sections (tests run
 * the core's checks that way); any other value, or none, lets the core use
 * membarrier where the kernel offers it.
 */
void
oc__membarrier_initialize(void)
{
#if OC__MEMBARRIER_POSSIBLE
	const char *setting = getenv("OBSERVER_CORE_MEMBARRIER");

	if (setting != NULL && strcmp(setting, "0") == 0)
		return;
	oc__membarrier_active = oc_membarrier_register();
#endif
}

/*
 * In the child of fork(), single-threaded. Linux keeps the registration in
 * the child; registering again costs one system call and covers a kernel
 * that did not. If it failed, the child's sections go back to the fence:
 * safe to switch here, as no other thread exists, and a thread created
 * later starts after clone(), a full barrier.
 */
void
oc__membarrier_after_fork(void)
{
#if OC__MEMBARRIER_POSSIBLE
	if (oc__membarrier_active && !oc_membarrier_register())
		oc__membarrier_active = false;
#endif
}

/*
 * Under the reclaim lock, after handing retirements to ck_epoch and before
 * ck_epoch scans the records (poll or synchronize): when sections are not
 * fenced, a private expedited membarrier (a full barrier on every CPU that
 * runs one of this process's threads, see oc__section_enter). If it ever
 * failed after a successful registration (the kernel documents no such
 * case), MEMBARRIER_CMD_GLOBAL gives the same ordering more slowly; if that
 * failed too the process stops rather than release memory a reader may
 * still use.
 */
void
oc__membarrier_before_scan(void)
{
#if OC__MEMBARRIER_POSSIBLE
	if (!oc__membarrier_active)
		return;
	__atomic_fetch_add(&oc_stat_membarriers, 1, __ATOMIC_RELAXED);
	if (oc_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
		return;
	if (oc_membarrier(MEMBARRIER_CMD_GLOBAL) == 0)
		return;
	oc__fatal("membarrier", errno);
#endif
}

/* oc_testing_membarriers: private expedited membarriers issued so far. */
uint64_t
oc_testing_membarriers(void)
{
	return __atomic_load_n(&oc_stat_membarriers, __ATOMIC_RELAXED);
}
