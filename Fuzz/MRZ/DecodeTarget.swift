// libFuzzer target `mrz-decode`: the corrector and the posterior decoder on MRZs that are nearly
// right, which raw bytes almost never reach (`DecodeInput`: a generated MRZ, substitutions, OCR
// evidence). Every parse must satisfy `Oracle`, the unmodified MRZ must come back valid and
// unchanged, and each input is bounded in time by libFuzzer's -timeout.

let fuzzParser = MRZParser(options: .init(referenceDate: fuzzReferenceDate))

@_cdecl("LLVMFuzzerTestOneInput")
public func mrzDecodeFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let input = DecodeInput(UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    let broken = input.violations(fuzzParser)
    if !broken.isEmpty { fatalError("invariant violated: " + broken.joined(separator: "; ")) }
    return 0
}
