/*
 * SwiftPM builds a C target from at least one source file; everything
 * CSwiftRuntime provides is declared or defined inline in
 * include/CSwiftRuntime.h.
 */
#include "CSwiftRuntime.h"
