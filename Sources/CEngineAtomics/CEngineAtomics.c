/*
 * SwiftPM builds a C target from at least one source file; everything
 * CEngineAtomics provides is defined inline in include/CEngineAtomics.h.
 */
#include "CEngineAtomics.h"
