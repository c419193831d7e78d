// The Concurrency Kit headers ObserverSwift's core is built on.
// Installed by Debian's libck-dev (pkg-config name `ck`) or Homebrew's concurrencykit.
#ifndef C_CONCURRENCY_KIT_SHIM_H
#define C_CONCURRENCY_KIT_SHIM_H

#if defined(__has_include) && !__has_include(<ck_epoch.h>)
#error "ObserverSwift needs Concurrency Kit: apt-get install libck-dev (Debian/Ubuntu) or brew install concurrencykit pkg-config (macOS)"
#endif

#include <ck_epoch.h>
#include <ck_pr.h>
#include <ck_stack.h>

#endif
