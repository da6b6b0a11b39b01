// CPCSCLite — pcsc-lite's PC/SC API (Debian libpcsclite-dev, /usr/include/PCSC) for ChipAccessPCSC, plus the few
// values Swift cannot import from its macros. pcsc-lite's own headers include <pcsclite.h> and <wintypes.h>
// without the PCSC/ prefix; the two forwarding headers beside this one resolve them without a -I flag (which a
// product's dependency may not carry) and without pkg-config's -pthread (which SwiftPM refuses with a warning).
#ifndef CPCSCLITE_H
#define CPCSCLITE_H
#include <PCSC/winscard.h>
#include <PCSC/reader.h>
#include <stdint.h>

/// The PCI header for T=1 / T=0 transmissions (`SCARD_PCI_T1`, `SCARD_PCI_T0`).
const SCARD_IO_REQUEST *cpcsc_pci(DWORD protocol);
/// SCARD_AUTOALLOCATE, SCARD_STATE_* and SCARD_* values as Swift sees them.
DWORD cpcsc_infinite(void);
#endif
