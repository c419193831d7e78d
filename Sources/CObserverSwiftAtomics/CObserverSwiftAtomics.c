/*
 * SwiftPM builds a C target from at least one source file; everything
 * CObserverSwiftAtomics provides is defined inline in include/CObserverSwiftAtomics.h.
 */
#include "CObserverSwiftAtomics.h"
