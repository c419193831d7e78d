/*
 * The subscription-tracking flag (include/ea_subscription_tracking.h) and
 * its initial value, read from the environment before main runs.
 */
#include "ea_subscription_tracking.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

uint8_t ea_subscription_tracking = 0;

bool
ea_subscription_tracking_requested(const char *value)
{
	if (value == NULL)
		return false;
	return strcmp(value, "1") == 0 || strcasecmp(value, "true") == 0 || strcasecmp(value, "yes") == 0;
}

__attribute__((constructor)) static void
ea_subscription_tracking_from_environment(void)
{
	if (ea_subscription_tracking_requested(getenv("OBSERVER_TRACK_SUBSCRIPTIONS")))
		ea_subscription_tracking = 1;
}
