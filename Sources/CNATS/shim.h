// The NATS C client (cnats) that ObserverNATS bridges onto.
// Installed by Debian's libnats-dev (pkg-config name `libnats`) or Homebrew's cnats.
#ifndef C_NATS_SHIM_H
#define C_NATS_SHIM_H

#if defined(__has_include) && !__has_include(<nats/nats.h>)
#error "ObserverNATS needs the NATS C client: apt-get install libnats-dev (Debian/Ubuntu) or brew install cnats (macOS)"
#endif

#include <nats/nats.h>

#endif
