import Foundation
import IDVCore
@testable import IDVHTTP
import XCTest

/// ``JSONText`` writes the bytes `JSONEncoder` (`.sortedKeys`, `.withoutEscapingSlashes`) writes, or
/// declines: the light answers' fast path must not change a single byte on the wire.
final class JSONTextTests: XCTestCase {
    func encoder(_ v: JSONValue) throws -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try e.encode(v)
    }

    func testSameBytesAsJSONEncoder() throws {
        let values: [JSONValue] = [
            .null, true, false, 0, -1, .integer(Int.max), .integer(Int.min), "", "plain",
            "quote \" backslash \\ slash / line\nfeed\rreturn\ttab", "é ü ß 漢字 😀 \u{2028} \u{2029} \u{FEFF}",
            [], [:], [1, "two", [3], ["four": 4]],
            ["status": "ok", "version": "0.1.0", "schema_version": 7,
             "analysis": ["in_flight": 0, "queued": 0, "threads": 2, "queue_limit": 8]],
            ["b": 1, "B": 2, "a_b": 3, "aB": 4, "a": 5, "a1": 6, "A": 7, "_": 8, "é": 9, "z": 10, "Z0": 11],
            ["nested": ["deeper": ["deepest": [true, false, .null]]], "k/slash": "v/slash"],
        ]
        for v in values {
            let fast = try XCTUnwrap(JSONText.encode(v), "\(v)")
            XCTAssertEqual(String(decoding: fast, as: UTF8.self), String(decoding: try encoder(v), as: UTF8.self))
            // And what HTTPResponse.json answers for it.
            XCTAssertEqual(HTTPResponse.json(v).body, try encoder(v))
        }
    }

    func testDeclinesWhereTheSpellingsMayDiffer() throws {
        let declined: [JSONValue] = [.number(100), .number(0.1), ["x": [.number(1.5)]], "bell \u{07}", "nul \u{00}", "del \u{7F}", ["k\u{01}": 1]]
        for v in declined {
            XCTAssertNil(JSONText.encode(v), "\(v)")
            // HTTPResponse.json still answers, through JSONEncoder.
            XCTAssertEqual(HTTPResponse.json(v).body, try encoder(v))
        }
    }
}
