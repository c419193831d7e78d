// The Concurrency Kit headers ObserverSwift's core is built on.
// Installed by Debian's libck-dev (pkg-config name `ck`) or Homebrew's concurrencykit.
#ifndef C_CONCURRENCY_KIT_SHIM_H
#define C_CONCURRENCY_KIT_SHIM_H

#include <ck_epoch.h>
#include <ck_pr.h>
#include <ck_stack.h>

#endif
