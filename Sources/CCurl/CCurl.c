// SwiftPM builds a C target from at least one source file; everything CCurl offers is in include/CCurl.h.
#include "CCurl.h"
