// Fuzz harness support for `chip-lds`, shared by the libFuzzer target (Fuzz/EMRTD/LDSTarget.swift, compiled
// with Sources/EMRTD by scripts/fuzz, where the EMRTD types are in the same module) and by
// Tests/EMRTDTests/ChipFuzzRegressionTests.swift (which sees this file through a symlink and imports EMRTD):
// which parser an input drives, and what every parse must satisfy whatever the bytes.
#if canImport(EMRTD)
import EMRTD
#endif
#if canImport(MRZ)
import MRZ
#endif
import Foundation

/// What the first byte of a `chip-lds` input chooses (modulo the count); the rest of the input is the file.
enum ChipParser: Int, CaseIterable {
    case ber, com, dg1, dg2, dg11, dg12, dg14, dg15, sod, certificate, crl, trustMaterial, jpeg2000
}

/// The invariants of BER-TLV reading (X.690 §8.1, `BERReader`) and of DER re-encoding (`DER`) on `bytes`.
enum BEROracle {
    /// Images decoded here are at most this many pixels (64 × 64): enough for OpenJPEG's and the shim's
    /// conversion code, small enough to keep each input fast.
    static let maxPixels = 4096

    /// The byte offset a BER error names (nil for `.empty`).
    static func offset(_ e: BERError) -> Int? {
        switch e {
        case .empty: return nil
        case .truncatedTag(let o), .tagTooLong(let o), .truncatedLength(let o), .indefiniteLengthOnPrimitive(let o),
             .missingEndOfContents(let o), .lengthFieldTooLong(let o, _), .lengthExceedsInput(let o, _, _),
             .lengthExceedsLimit(let o, _, _), .nestingTooDeep(let o, _), .unexpectedTag(let o, _, _),
             .trailingBytes(let o, _), .invalidValue(let o, _):
            return o
        }
    }

    /// A thrown error that names a place outside the input.
    static func errorViolations(_ error: Error, count: Int) -> [String] {
        let ber: BERError?
        if let b = error as? BERError { ber = b } else if case .encoding(_, let b)? = error as? LDSError { ber = b } else { ber = nil }
        guard let ber, let o = offset(ber) else { return [] }
        return (0...count).contains(o) ? [] : ["error \(ber) names byte \(o) of \(count)"]
    }

    /// The tag octets of `raw` as the reader packed them (big-endian, leading zero octets dropped).
    static func tagOctets(_ raw: UInt32) -> [UInt8] {
        var t: [UInt8] = []
        var r = raw
        repeat { t.insert(UInt8(r & 0xFF), at: 0); r >>= 8 } while r > 0
        return t
    }

    /// One element's canonical DER encoding (children re-encoded in turn; a constructed value that is not a
    /// sequence of TLVs kept as it is) and whether the element was DER already, with the violations found.
    static func walk(_ e: BERElement, in bytes: [UInt8], inside parent: Range<Int>, visited: inout Int,
                     _ out: inout [String]) -> (canonical: [UInt8], der: Bool) {
        visited += 1
        func here() -> String { "element \(e.tag) at \(e.start)..<\(e.end)" }
        // Headers do not overlap and each takes two bytes or more.
        if visited * 2 > bytes.count { out.append("more elements than the input holds"); return ([], false) }
        guard e.start >= parent.lowerBound, e.end <= parent.upperBound, e.start < e.valueRange.lowerBound,
              e.valueRange.upperBound <= e.end, e.buffer == bytes else {
            out.append("\(here()) value \(e.valueRange) outside \(parent)")
            return ([], false)
        }
        if e.depth > BERLimits.default.maxDepth { out.append("\(here()) at depth \(e.depth)") }
        // The header, read again here: the tag octets, then a definite length or the indefinite form.
        let tag = tagOctets(e.tag.raw)
        let header = Array(bytes[e.start..<e.valueRange.lowerBound])
        guard header.starts(with: tag), header.count > tag.count else {
            out.append("\(here()): header \(header) does not start with tag octets \(tag)")
            return ([], false)
        }
        let lengthOctets = Array(header[tag.count...])
        let indefinite = lengthOctets == [0x80]
        if indefinite {
            if e.end != e.valueRange.upperBound + 2 || bytes[e.valueRange.upperBound..<e.end] != [0, 0] {
                out.append("\(here()): indefinite length without end-of-contents octets")
            }
            if !e.tag.isConstructed { out.append("\(here()): indefinite length on a primitive") }
        } else {
            let n = lengthOctets[0] < 0x80 ? 0 : Int(lengthOctets[0] & 0x7F)
            let declared = n == 0 ? Int(lengthOctets[0]) : lengthOctets.dropFirst().reduce(0) { $0 << 8 | Int($1) }
            if lengthOctets.count != 1 + n || declared != e.valueRange.count || e.end != e.valueRange.upperBound {
                out.append("\(here()): length octets \(lengthOctets) for a value of \(e.valueRange.count) bytes")
            }
        }
        var der = !indefinite && lengthOctets == DER.length(e.valueRange.count)
        // The value re-encoded: children in turn, or the octets as they are.
        var body: [UInt8]?
        if e.tag.isConstructed {
            do {
                let kids = try e.children()
                var at = e.valueRange.lowerBound
                var joined: [UInt8] = []
                for k in kids {
                    if k.start != at { out.append("child \(k.tag) starts at \(k.start), not \(at)") }
                    if k.depth != e.depth + 1 { out.append("child depth \(k.depth) under depth \(e.depth)") }
                    let (c, d) = walk(k, in: bytes, inside: e.valueRange, visited: &visited, &out)
                    joined += c
                    der = der && d
                    at = k.end
                }
                body = joined
                if at != e.valueRange.upperBound { out.append("\(here()): children end at \(at), the value at \(e.valueRange.upperBound)") }
            } catch {
                out += errorViolations(error, count: bytes.count)
                if indefinite { out.append("\(here()): indefinite value whose children do not read again: \(error)") }
            }
        }
        let canonical = DER.tlv(e.tag.raw, body ?? e.valueBytes)
        // X.690 §10: a DER element is its own canonical encoding.
        if der && canonical != e.encoded { out.append("\(here()) is DER but DER.tlv re-encodes it as \(canonical.count) different bytes") }
        return (canonical, der)
    }

    /// The invariants of the element tree read from `bytes`: every element inside its parent and the input,
    /// children in order without gaps, headers read back as the reader reports them, DER elements re-encoded
    /// byte for byte, and the canonical re-encoding read back as DER with the same bytes (idempotence).
    static func violations(_ bytes: [UInt8]) -> [String] {
        var out: [String] = []
        var visited = 0
        var r = BERReader(bytes)
        while !r.atEnd {
            let e: BERElement
            do { e = try r.read() } catch { out += errorViolations(error, count: bytes.count); break }
            let (canonical, _) = walk(e, in: bytes, inside: 0..<bytes.count, visited: &visited, &out)
            guard out.isEmpty else { break }
            do {
                let again = try BERReader.single(canonical)
                var seen = 0, broken: [String] = []
                let (twice, der) = walk(again, in: canonical, inside: 0..<canonical.count, visited: &seen, &broken)
                if !broken.isEmpty || !der || twice != canonical || again.tag != e.tag {
                    out.append("canonical re-encoding of \(e.tag) at \(e.start) is not DER when read again: \(broken)")
                }
            } catch {
                out.append("canonical re-encoding of \(e.tag) at \(e.start) does not read: \(error)")
            }
        }
        return out
    }

    /// Whether `e` and everything inside it is DER (definite, minimal lengths).
    static func isDER(_ e: BERElement) -> Bool {
        var seen = 0, broken: [String] = []
        let (canonical, der) = walk(e, in: e.buffer, inside: 0..<e.buffer.count, visited: &seen, &broken)
        return broken.isEmpty && der && canonical == e.encoded
    }
}

/// The invariants one `chip-lds` input breaks: the first byte chooses the parser (`ChipParser`), the rest
/// is the file. Thrown errors are fine; an error naming a byte outside the input, a result the input does
/// not support, or a DG1 that does not survive re-encoding is not.
func chipViolations(_ data: UnsafeBufferPointer<UInt8>) -> [String] {
    guard let selector = data.first else { return [] }
    let bytes = Array(data.dropFirst())
    var out: [String] = []
    /// Runs one parser; its error, if any, must name a place inside the input.
    func parse<T>(_ body: () throws -> T) -> T? {
        do { return try body() } catch { out += BEROracle.errorViolations(error, count: bytes.count); return nil }
    }
    switch ChipParser(rawValue: Int(selector) % ChipParser.allCases.count)! {
    case .ber:
        out += BEROracle.violations(bytes)
    case .com:
        if let com = parse({ try EFCOM(bytes) }), com.dataGroups != com.dataGroups.sorted() || !com.dataGroups.allSatisfy({ (1...16).contains($0) }) {
            out.append("EF.COM data groups \(com.dataGroups)")
        }
    case .dg1:
        guard let dg1 = parse({ try DG1(bytes) }) else { break }
        let encoded = DG1.encode(lines: dg1.lines)
        if let again = parse({ try DG1(encoded) }) {
            if again.lines != dg1.lines || again.mrz.format != dg1.mrz.format || again.mrz.valid != dg1.mrz.valid
                || again.mrz.fields != dg1.mrz.fields {
                out.append("DG1 \(dg1.lines) reads differently once re-encoded: \(again.lines)")
            }
        } else {
            out.append("DG1 \(dg1.lines) does not read once re-encoded")
        }
        // A DER DG1 holding nothing but the MRZ element is exactly what DG1.encode writes.
        if let root = try? BERReader.single(bytes), let kids = try? root.children(), kids.count == 1, kids[0].tag.raw == 0x5F1F,
           BEROracle.isDER(root), encoded != bytes {
            out.append("DER DG1 \(dg1.lines) re-encodes to different bytes")
        }
    case .dg2:
        guard let dg2 = parse({ try DG2(bytes) }) else { break }
        for f in dg2.faces {
            if f.imageData.count > bytes.count { out.append("DG2 image of \(f.imageData.count) bytes in a file of \(bytes.count)") }
            if f.imageDataType == .jpeg2000, f.imageData.count <= 4096, let p = try? JPEG2000.decode(f.imageData, maxPixels: BEROracle.maxPixels),
               p.width * p.height > BEROracle.maxPixels {
                out.append("JPEG 2000 portrait of \(p.width) × \(p.height) above the pixel limit")
            }
        }
    case .dg11: _ = parse { try DG11(bytes) }
    case .dg12: _ = parse { try DG12(bytes) }
    case .dg14: _ = parse { try DG14(bytes) }
    case .dg15:
        // The ISO/IEC 9796-2 decoder on the bytes as a recovered representative (Active Authentication, ICAO
        // 9303-11 §6.1): whatever they hold, a verdict and no trap; a success must be a hash over this challenge.
        let challenge: [UInt8] = [0x46, 0x55, 0x5A, 0x5A, 0x20, 0x41, 0x41, 0x21]
        if case let .success(m) = ActiveAuthentication.decodeISO9796_2(bytes, challenge: challenge) {
            let trailer = bytes.last == 0xBC ? 1 : 2
            let h = Array(bytes[(bytes.count - trailer - m.digest.byteCount)..<(bytes.count - trailer)])
            let start = bytes[0] & 0x0F == 0x0A ? 1 : (bytes.firstIndex(of: 0xBA) ?? 0) + 1
            if m.digest.digest(Array(bytes[start..<(bytes.count - trailer - h.count)]) + challenge) != h {
                out.append("ISO/IEC 9796-2 representative accepted with a hash that is not H(M1 ‖ challenge)")
            }
        }
        // DG15's key verifying the bytes as a signature: refused (the input cannot be a signature over this
        // challenge) with a typed failure, never a trap.
        if let dg15 = parse({ try DG15(bytes) }),
           case .success = ActiveAuthentication.verify(challenge: challenge, signature: bytes, publicKey: dg15.subjectPublicKeyInfo, signatureAlgorithm: nil) {
            out.append("DG15's own bytes verified as an Active Authentication signature")
        }
    case .sod:
        guard let sod = parse({ try SecurityObject(bytes) }) else { break }
        if !sod.dataGroupHashes.keys.allSatisfy({ (1...16).contains($0) }) { out.append("SOD hashes data groups \(sod.dataGroupHashes.keys.sorted())") }
        // The signed content is itself BER: the same reader invariants hold on it.
        out += BEROracle.violations(sod.signedData.content)
        for i in 0..<sod.signedData.signerCount { _ = try? sod.signedData.signerInfo(i) }
        for c in sod.signedData.certificates { _ = c.fingerprint; _ = c.isSelfSigned }
        let hashes = PassiveAuthentication.checkHashes(sod, dataGroups: [1: [0x61, 0x00]])
        let listed = Set(sod.dataGroupHashes.keys).union([1]).sorted()
        if hashes.map(\.dataGroup) != listed { out.append("hash outcomes for \(hashes.map(\.dataGroup)), not \(listed)") }
        _ = PassiveAuthentication.verifySignature(sod, documentSigner: PassiveAuthentication.documentSigner(of: sod, trust: CSCATrust()))
    case .certificate:
        if let c = parse({ try Certificate(bytes) }) { _ = c.description; _ = c.fingerprint; _ = c.isSelfSigned }
    case .crl:
        if let crl = parse({ try RevocationList(bytes) }), crl.revokedCount < 0 { out.append("CRL lists \(crl.revokedCount) revocations") }
    case .trustMaterial:
        _ = parse { try TrustMaterial(bytes) }
    case .jpeg2000:
        if bytes.count <= 4096, let p = parse({ try JPEG2000.decode(bytes, maxPixels: BEROracle.maxPixels) }),
           p.width * p.height > BEROracle.maxPixels || p.width < 1 || p.height < 1 {
            out.append("JPEG 2000 image of \(p.width) × \(p.height) decoded under a limit of \(BEROracle.maxPixels) pixels")
        }
    }
    return out
}
