// Forwards pcsc-lite's <wintypes.h> (see cpcsclite.h).
#include <PCSC/wintypes.h>
