// libFuzzer target `mrz-text`: arbitrary bytes as MRZ text and as lines (`textViolations`), with
// correction on. Nothing may trap, hang (libFuzzer's -timeout) or break an invariant (`Oracle`); a
// broken invariant traps, and libFuzzer keeps the input as a crash artifact.

let fuzzParser = MRZParser(options: .init(referenceDate: fuzzReferenceDate))

@_cdecl("LLVMFuzzerTestOneInput")
public func mrzTextFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let broken = textViolations(UnsafeBufferPointer(start: data, count: size), fuzzParser)
    if !broken.isEmpty { fatalError("invariant violated: " + broken.joined(separator: "; ")) }
    return 0
}
