#include "nats_baselines.h"
