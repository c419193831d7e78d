#ifndef NATS_BASELINES_H
#define NATS_BASELINES_H
#include <stdint.h>
#endif
