@testable import EMRTD
import XCTest

/// Bad input is refused clearly: thousands of truncated and byte-flipped copies of the real chip files go
/// through every parser and passive authentication; each either parses or throws a typed error — none crashes,
/// hangs or allocates by a declared length.
final class MutationTests: XCTestCase {
    struct SplitMix { var s: UInt64; mutating func next() -> UInt64 { s &+= 0x9E3779B97F4A7C15; var z = s; z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) &* 0x94D049BB133111EB; return z ^ (z >> 31) } }

    func mutants(_ b: [UInt8], count: Int, seed: UInt64) -> [[UInt8]] {
        var rng = SplitMix(s: seed)
        var out: [[UInt8]] = []
        for i in 0..<count {
            var m = b
            switch i % 4 {
            case 0: m = Array(b.prefix(Int(rng.next() % UInt64(b.count))))                     // truncated
            case 1: m[Int(rng.next() % UInt64(b.count))] ^= UInt8(1 << (rng.next() % 8))        // one bit flipped
            case 2: for _ in 0..<8 { m[Int(rng.next() % UInt64(b.count))] = UInt8(rng.next() & 0xFF) }   // bytes replaced
            default:                                                                            // a length byte made huge
                let at = Int(rng.next() % UInt64(min(b.count, 64)))
                m[at] = 0x84
            }
            out.append(m)
        }
        return out
    }

    func testMutatedSODsAndDataGroupsAreRefusedWithTypedErrors() throws {
        let sod = try Samples.bytes("nld-specimen-2006-loes-meulendijk/ef011D.bin")
        let dg1 = try Samples.bytes("nld-specimen-2006-loes-meulendijk/ef0101.bin")
        let dg2 = try Samples.bytes("nld-specimen-2006-loes-meulendijk/ef0102.bin")
        let com = try Samples.bytes("nld-specimen-2006-loes-meulendijk/ef011E.bin")
        let dg14 = try Samples.bytes("bsi2008-erika-mustermann/Datagroup14.bin")
        let dg15 = try Samples.bytes("nld-specimen-2006-loes-meulendijk/ef010F.bin")
        var parsed = 0, refused = 0
        func expectTyped(_ body: () throws -> Void) {
            do { try body(); parsed += 1 } catch is LDSError { refused += 1 } catch { XCTFail("untyped error \(error)") }
        }
        for m in mutants(sod, count: 600, seed: 1) {
            expectTyped {
                let s = try SecurityObject(m)
                _ = PassiveAuthentication.verify(s, dataGroups: [1: dg1], trust: CSCATrust(), at: Date())
            }
        }
        for m in mutants(dg1, count: 400, seed: 2) { expectTyped { _ = try DG1(m) } }
        for m in mutants(dg2, count: 400, seed: 3) { expectTyped { _ = try DG2(m) } }
        for m in mutants(com, count: 200, seed: 4) { expectTyped { _ = try EFCOM(m) } }
        for m in mutants(dg14, count: 200, seed: 5) { expectTyped { _ = try DG14(m) } }
        for m in mutants(dg15, count: 200, seed: 6) { expectTyped { _ = try DG15(m) } }
        XCTAssertGreaterThan(refused, 1000)
        XCTAssertGreaterThan(parsed, 50)   // single bit flips inside values still parse (and then fail their hash)
    }

    func testMutatedJPEG2000PortraitsDecodeOrFailCleanly() throws {
        let j2k = try Samples.bytes("nld-specimen-2006-loes-meulendijk/DG2_face_extracted.jp2")
        var decoded = 0, refused = 0
        for m in mutants(j2k, count: 60, seed: 7) {
            do { let p = try JPEG2000.decode(m); XCTAssertEqual(p.pixels.count, p.width * p.height * p.channels); decoded += 1 }
            catch is CryptoError { refused += 1 }
        }
        XCTAssertEqual(decoded + refused, 60)
        XCTAssertGreaterThan(refused, 0)
        // A header declaring more pixels than the limit is refused before decoding.
        XCTAssertThrowsError(try JPEG2000.decode(j2k, maxPixels: 1000)) { e in XCTAssertEqual((e as? CryptoError)?.kind, .tooLarge) }
    }

    func testMutatedTrustMaterialIsRefusedWithTypedErrors() throws {
        let cert = try Samples.bytes("pki/nl-csca/CSCA_NL_serial6_2021-2034.cer")
        let crl = try Samples.bytes("pki/nl-csca/COL.crl")
        var refused = 0
        for m in mutants(cert, count: 200, seed: 8) + mutants(crl, count: 200, seed: 9) {
            do { _ = try TrustMaterial(m) } catch is TrustError { refused += 1 } catch { XCTFail("untyped error \(error)") }
        }
        XCTAssertGreaterThan(refused, 100)
    }
}
