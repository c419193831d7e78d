// The NATS C client (cnats) for the raw C baselines of nats-bench. The root
// package's CNATS module is not a product, so this package wraps cnats itself.
// Installed by Debian's libnats-dev (pkg-config name `libnats`) or Homebrew's cnats.
#ifndef C_NATS_CLIENT_SHIM_H
#define C_NATS_CLIENT_SHIM_H

#include <nats/nats.h>

#endif
