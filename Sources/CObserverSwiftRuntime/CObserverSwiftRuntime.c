/*
 * SwiftPM builds a C target from at least one source file; everything
 * CObserverSwiftRuntime provides is declared or defined inline in
 * include/CObserverSwiftRuntime.h.
 */
#include "CObserverSwiftRuntime.h"
