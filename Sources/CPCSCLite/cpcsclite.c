#include "cpcsclite.h"

const SCARD_IO_REQUEST *cpcsc_pci(DWORD protocol) {
    return protocol == SCARD_PROTOCOL_T0 ? SCARD_PCI_T0 : SCARD_PCI_T1;
}

DWORD cpcsc_infinite(void) { return INFINITE; }
