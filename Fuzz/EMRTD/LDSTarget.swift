// libFuzzer target `chip-lds`: the eMRTD chip's TLV and CMS parsing (Sources/EMRTD and its C shim
// Sources/CEMRTD under AddressSanitizer) on arbitrary bytes. The first input byte chooses the parser
// (`ChipParser`), the rest is the file: a BER-TLV tree walk with DER re-encoding (X.690 §8.1, §10), EF.COM,
// DG1, DG2 with its facial record (and a JPEG 2000 portrait of at most 64 × 64 pixels decoded), DG11, DG12,
// DG14, DG15 (ICAO 9303-10 §4.6–4.7; the bytes also as an ISO/IEC 9796-2 representative and as an Active
// Authentication signature checked with the DG15 key they hold, ICAO 9303-11 §6.1), EF.SOD as CMS SignedData (9303-10 §4.6.2, RFC 5652), an X.509
// certificate, a CRL, trust material (PEM, LDIF, master list) and a bare JPEG 2000 image. Thrown errors are
// the expected outcome for most inputs; a trap, an AddressSanitizer report, a leak, a timeout or a broken
// invariant (`chipViolations`, Fuzz/EMRTD/ChipFuzzSupport.swift) is a failure.
@_cdecl("LLVMFuzzerTestOneInput")
public func chipLDSFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let broken = chipViolations(UnsafeBufferPointer(start: data, count: size))
    if !broken.isEmpty { fatalError("invariant violated: " + broken.joined(separator: "; ")) }
    return 0
}
