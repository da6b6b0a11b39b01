// libFuzzer target `chip-lds`: the eMRTD chip's TLV and CMS parsing (Sources/EMRTD and the OpenSSL
// shim Sources/CEMRTD/crypto.c) on arbitrary bytes. The first input byte chooses the parser, the rest
// is the file: a BER-TLV tree walk (X.690 §8.1), EF.COM, DG1, DG2, DG11, DG12, DG14, DG15
// (ICAO 9303-10 §4.6–4.7), EF.SOD as CMS SignedData (9303-10 §4.6.2, RFC 5652), an X.509 certificate
// and a CRL. Thrown errors are the expected outcome for most inputs; a trap, an AddressSanitizer report,
// a leak, a timeout or a broken invariant (`lengthInvariants`, the DG1 round trip) is a failure.
// JPEG 2000 portraits are not decoded here: OpenJPEG is fuzzed upstream (OSS-Fuzz), and its decoder
// under ASan would take most of the time budget.
import Foundation
import MRZ

/// The invariants of a BER tree read from `bytes`: every element lies inside the input, after its
/// parent's value starts and before it ends, children in order without overlap; the walk is bounded by
/// `BERLimits` (depth) and by the input's length (each element takes at least two bytes).
func lengthInvariants(_ bytes: [UInt8]) -> [String] {
    var out: [String] = []
    var visited = 0
    func walk(_ e: BERElement, inside parent: Range<Int>) {
        visited += 1
        if visited > bytes.count { out.append("more elements than input bytes"); return }
        if !(e.start >= parent.lowerBound && e.end <= parent.upperBound && e.start < e.valueRange.lowerBound
             && e.valueRange.upperBound <= e.end) {
            out.append("element \(e.tag) at \(e.start)..<\(e.end) value \(e.valueRange) outside \(parent)")
            return
        }
        guard let kids = try? e.children() else { return }
        var at = e.valueRange.lowerBound
        for k in kids {
            if k.start != at { out.append("child \(k.tag) starts at \(k.start), not \(at)") }
            if k.depth != e.depth + 1 { out.append("child depth \(k.depth) under depth \(e.depth)") }
            walk(k, inside: e.valueRange)
            at = k.end
        }
    }
    var r = BERReader(bytes)
    while !r.atEnd, let e = try? r.read() { walk(e, inside: 0..<bytes.count) }
    return out
}

func chipViolations(_ data: UnsafeBufferPointer<UInt8>) -> [String] {
    guard let selector = data.first else { return [] }
    let bytes = Array(data.dropFirst())
    switch selector % 11 {
    case 0: return lengthInvariants(bytes)
    case 1: _ = try? EFCOM(bytes)
    case 2:
        if let dg1 = try? DG1(bytes) {
            guard let again = try? DG1(DG1.encode(lines: dg1.lines)) else { return ["DG1 \(dg1.lines) does not parse once re-encoded"] }
            if again.lines != dg1.lines { return ["DG1 lines changed on re-encoding"] }
        }
    case 3:
        if let dg2 = try? DG2(bytes) {
            for f in dg2.faces where f.imageData.count > bytes.count { return ["DG2 image larger than its file"] }
        }
    case 4: _ = try? DG11(bytes)
    case 5: _ = try? DG12(bytes)
    case 6: _ = try? DG14(bytes)
    case 7: _ = try? DG15(bytes)
    case 8:
        if let sod = try? SecurityObject(bytes) {
            _ = PassiveAuthentication.checkHashes(sod, dataGroups: [1: [0x61, 0x00]])
            _ = PassiveAuthentication.verifySignature(sod, documentSigner: PassiveAuthentication.documentSigner(of: sod, trust: CSCATrust()))
        }
    case 9: if let c = try? Certificate(bytes) { _ = c.description }
    default: _ = try? RevocationList(bytes)
    }
    return []
}

@_cdecl("LLVMFuzzerTestOneInput")
public func chipLDSFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let broken = chipViolations(UnsafeBufferPointer(start: data, count: size))
    if !broken.isEmpty { fatalError("invariant violated: " + broken.joined(separator: "; ")) }
    return 0
}
