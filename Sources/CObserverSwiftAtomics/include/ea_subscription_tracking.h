/*
 * Whether ObserverSwift records where each new subscription was made
 * (ObserverCore's subscription tracking). One byte in C, so that the
 * subscribe path tests it with one relaxed load and no lazy initialisation;
 * set at load time from the environment variable OBSERVER_TRACK_SUBSCRIPTIONS
 * ("1", "true" or "yes" turn it on) and by ObserverSwift afterwards.
 */
#ifndef EA_SUBSCRIPTION_TRACKING_H
#define EA_SUBSCRIPTION_TRACKING_H

#include <stdbool.h>
#include <stdint.h>

extern uint8_t ea_subscription_tracking;

/* Whether a value of OBSERVER_TRACK_SUBSCRIPTIONS turns tracking on (NULL: no). */
bool ea_subscription_tracking_requested(const char *value);

static inline __attribute__((always_inline)) bool
ea_subscription_tracking_is_on(void)
{
	return __atomic_load_n(&ea_subscription_tracking, __ATOMIC_RELAXED) != 0;
}

static inline __attribute__((always_inline)) void
ea_subscription_tracking_set(bool on)
{
	__atomic_store_n(&ea_subscription_tracking, on ? 1 : 0, __ATOMIC_RELAXED);
}

#endif /* EA_SUBSCRIPTION_TRACKING_H */
