@testable import EMRTD
import XCTest

/// BER-TLV reading: every declared length is checked against the bytes present before anything is read.
final class BERTests: XCTestCase {
    func testReadsNestedDefiniteLengths() throws {
        // 61 (DG1) { 5F1F "AB" }, long-form length 0x81.
        let bytes: [UInt8] = [0x61, 0x81, 0x05, 0x5F, 0x1F, 0x02, 0x41, 0x42]
        let e = try BERReader.single(bytes)
        XCTAssertEqual(e.tag.raw, 0x61)
        XCTAssertTrue(e.tag.isConstructed)
        XCTAssertEqual(e.tag.tagClass, 1)
        let kids = try e.children()
        XCTAssertEqual(kids.count, 1)
        XCTAssertEqual(kids[0].tag.raw, 0x5F1F)
        XCTAssertEqual(kids[0].valueBytes, [0x41, 0x42])
    }

    func testRefusesAOneGigabyteDeclaredLength() {
        // 75 (DG2) declaring 0x40000000 bytes with 4 present.
        let bytes: [UInt8] = [0x75, 0x84, 0x40, 0x00, 0x00, 0x00, 1, 2, 3, 4]
        XCTAssertThrowsError(try BERReader.single(bytes)) { e in
            XCTAssertEqual(e as? BERError, .lengthExceedsInput(offset: 1, declared: 1 << 30, available: 4))
            XCTAssertTrue("\(e)".contains("1073741824"), "\(e)")
        }
    }

    func testRefusesLengthPastTheEndAndTruncatedInput() {
        XCTAssertThrowsError(try BERReader.single([0x04, 0x05, 1, 2])) {
            XCTAssertEqual($0 as? BERError, .lengthExceedsInput(offset: 1, declared: 5, available: 2))
        }
        XCTAssertThrowsError(try BERReader.single([0x04])) { XCTAssertEqual($0 as? BERError, .truncatedLength(offset: 1)) }
        XCTAssertThrowsError(try BERReader.single([0x04, 0x82, 0x01])) { XCTAssertEqual($0 as? BERError, .truncatedLength(offset: 1)) }
        XCTAssertThrowsError(try BERReader.single([0x5F])) { XCTAssertEqual($0 as? BERError, .truncatedTag(offset: 0)) }
        XCTAssertThrowsError(try BERReader.single([])) { XCTAssertEqual($0 as? BERError, .empty) }
        // A child running past its parent's end is caught when the parent's children are read.
        let parent: [UInt8] = [0x30, 0x03, 0x04, 0x05, 0x00]
        XCTAssertThrowsError(try BERReader.single(parent).children()) {
            XCTAssertEqual($0 as? BERError, .lengthExceedsInput(offset: 3, declared: 5, available: 1))
        }
    }

    func testRefusesMalformedLengthsAndTags() {
        XCTAssertThrowsError(try BERReader.single([0x04, 0x85, 1, 0, 0, 0, 0])) {
            XCTAssertEqual($0 as? BERError, .lengthFieldTooLong(offset: 1, octets: 5))
        }
        XCTAssertThrowsError(try BERReader.single([0x04, 0xFF])) { XCTAssertEqual($0 as? BERError, .lengthFieldTooLong(offset: 1, octets: 127)) }
        XCTAssertThrowsError(try BERReader.single([0x04, 0x80, 0x00, 0x00])) { XCTAssertEqual($0 as? BERError, .indefiniteLengthOnPrimitive(offset: 1)) }
        XCTAssertThrowsError(try BERReader.single([0x5F, 0x81, 0x82, 0x83, 0x04, 0x00])) { XCTAssertEqual($0 as? BERError, .tagTooLong(offset: 0)) }
        XCTAssertThrowsError(try BERReader.single([0x04, 0x01, 0x00, 0xAA])) { XCTAssertEqual($0 as? BERError, .trailingBytes(offset: 3, count: 1)) }
        var limits = BERLimits()
        limits.maxLength = 2
        XCTAssertThrowsError(try BERReader.single([0x04, 0x03, 1, 2, 3], limits: limits)) {
            XCTAssertEqual($0 as? BERError, .lengthExceedsLimit(offset: 1, declared: 3, limit: 2))
        }
    }

    func testIndefiniteLengthsAndTheirLimits() throws {
        // 30 80 { 04 01 AA } 00 00
        let e = try BERReader.single([0x30, 0x80, 0x04, 0x01, 0xAA, 0x00, 0x00])
        XCTAssertEqual(try e.children().map(\.valueBytes), [[0xAA]])
        XCTAssertThrowsError(try BERReader.single([0x30, 0x80, 0x04, 0x01, 0xAA])) { XCTAssertEqual($0 as? BERError, .missingEndOfContents(offset: 0)) }
        // 60 levels of indefinite nesting exceed the depth limit instead of recursing without bound.
        let deep = Array(repeating: [UInt8]([0x30, 0x80]), count: 60).flatMap { $0 } + Array(repeating: UInt8(0), count: 120)
        XCTAssertThrowsError(try BERReader.single(deep)) { e in
            guard case .nestingTooDeep = e as? BERError else { return XCTFail("\(e)") }
        }
    }

    func testDEREncodingRoundTripsAndOIDs() throws {
        let oid = "2.23.136.1.1.1"
        let encoded = DER.sequence([DER.integer(0), DER.integer(128), DER.oid(oid), DER.octetString(Array(repeating: 7, count: 300))])
        let e = try BERReader.single(encoded)
        let kids = try e.children()
        XCTAssertEqual(try kids[0].intValue(), 0)
        XCTAssertEqual(try kids[1].intValue(), 128)
        XCTAssertEqual(try kids[2].oidValue(), oid)
        XCTAssertEqual(kids[3].valueRange.count, 300)
        XCTAssertEqual(DER.oid("1.2.840.113549.1.7.2"), [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02])
        XCTAssertThrowsError(try BERReader.single([0x06, 0x01, 0x80]).oidValue())
    }
}
