// libFuzzer target `chip-sm`: the client's chip access on arbitrary bytes — ICAO 9303-11 secure-messaging responses
// and commands (MAC, padding, DO'87'/'85'/'99'/'8E'; both ends, 3DES and AES-128/192/256), EF.CardAccess and DG14
// SecurityInfos with their DER re-encoding, DG15's public key, command APDU length fields, BER-TLV headers, and
// Active Authentication signatures (ISO/IEC 9796-2, ECDSA plain) — with ChipAccess's Swift and the OpenSSL shim
// (Sources/CChipCrypto) under AddressSanitizer. The first input byte chooses the parser (`ChipSMParser`), the
// second the cipher. A trap, a sanitizer report, a leak, a timeout or a broken invariant (`chipSMViolations`,
// Fuzz/ChipAccess/ChipSMFuzzSupport.swift) is a failure.
@_cdecl("LLVMFuzzerTestOneInput")
public func chipSMFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let broken = chipSMViolations(UnsafeBufferPointer(start: data, count: size))
    if !broken.isEmpty { fatalError("invariant violated: " + broken.joined(separator: "; ")) }
    return 0
}
