// Forwards pcsc-lite's <pcsclite.h> (see cpcsclite.h).
#include <PCSC/pcsclite.h>
