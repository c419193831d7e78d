// The NATS C client (cnats) that ObserverNATS bridges onto.
// Installed by Debian's libnats-dev (pkg-config name `libnats`) or Homebrew's cnats.
#ifndef C_NATS_SHIM_H
#define C_NATS_SHIM_H

#include <nats/nats.h>

#endif
