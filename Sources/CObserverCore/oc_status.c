/*
 * Status strings: the text of each oc_status_t (include/oc_status.h).
 */
#include "oc_internal.h"

/*
 * oc_status_string: a static, human-readable description of `status`; any
 * thread, never NULL ("unknown status" for a value outside the enum).
 */
const char *
oc_status_string(oc_status_t status)
{
	switch (status) {
	case OC_OK:
		return "ok";
	case OC_ENOMEM:
		return "out of memory";
	case OC_EINVAL:
		return "invalid argument (NULL list or context)";
	case OC_EFULL:
		return "list is full";
	case OC_ENOENT:
		return "stale, foreign or unknown handle";
	case OC_EINSECTION:
		return "cannot wait for readers from inside a read section (an observer callback)";
	case OC_EBUSY:
		return "writer lock busy";
	case OC_EEXHAUSTED:
		return "every handle sequence number has been issued";
	}
	return "unknown status";
}
