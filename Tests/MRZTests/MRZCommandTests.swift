import Foundation
import XCTest
import IDVTestSupport

/// `idvd mrz parse`, run as a real process (the binary `swift build` puts beside the test bundle).
final class MRZCommandTests: XCTestCase {
    /// The built `idvd` (IDVTestSupport ``IDVD``); a failure under CI when it is missing.
    var idvd: URL {
        get throws { URL(fileURLWithPath: try IDVD.binary()) }
    }

    func run(_ args: [String], stdin: String? = nil) throws -> (status: Int32, out: String, err: String) {
        let r = try IDVD.run(args, stdin: Data((stdin ?? "").utf8))
        return (r.status, r.output, r.errors)
    }

    let td3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]

    func testParseArgumentsPrintsICAOFields() throws {
        let r = try run(["mrz", "parse", "--reference-date", "2026-06-15"] + td3)
        XCTAssertEqual(r.status, 0, r.err)
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any]
        XCTAssertEqual(json["valid"] as? Bool, true)
        XCTAssertEqual(json["format"] as? String, "TD3")
        let f = json["fields"] as! [String: Any]
        XCTAssertEqual(f["document_number"] as? String, "L898902C3")
        XCTAssertEqual(f["issuing_state"] as? String, "UTO")
        XCTAssertEqual(f["nationality"] as? String, "UTO")
        XCTAssertEqual(f["birth_date"] as? String, "1974-08-12")
        XCTAssertEqual(f["expiry_date"] as? String, "2012-04-15")
        XCTAssertEqual(f["sex"] as? String, "F")
        XCTAssertEqual(f["surname"] as? String, "ERIKSSON")
        XCTAssertEqual(f["given_names"] as? String, "ANNA MARIA")
        let cds = json["check_digits"] as! [[String: Any]]
        XCTAssertEqual(cds.count, 5)
        XCTAssertTrue(cds.allSatisfy { $0["valid"] as? Bool == true })
    }

    func testParseStdinWithCorrection() throws {
        let bad = td3[0] + "\n" + td3[1].replacingOccurrences(of: "7408122", with: "74O8122") + "\n"
        let r = try run(["mrz", "parse"], stdin: bad)
        XCTAssertEqual(r.status, 0, r.err)
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any]
        XCTAssertEqual(json["valid"] as? Bool, true)
        let c = (json["corrections"] as! [[String: Any]]).first!
        XCTAssertEqual(c["from"] as? String, "O"); XCTAssertEqual(c["to"] as? String, "0")
        XCTAssertEqual(c["line"] as? Int, 2); XCTAssertEqual(c["column"] as? Int, 16)
        XCTAssertEqual(c["field"] as? String, "birth_date")
        // --no-correct reports it as read: invalid, exit status 1.
        let raw = try run(["mrz", "parse", "--no-correct"], stdin: bad)
        XCTAssertEqual(raw.status, 1)
        XCTAssertTrue(raw.out.contains("\"valid\" : false"))
    }

    func testJSONLines() throws {
        let input = """
            ["I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<","D231458907UTO7408122F1204159<<<<<<<6"]
            not json
            ["V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<","L8988901C4XXX4009078F9612109<<<<<<<<"]
            {"id": "x", "lines": ["V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<","L89889O1C4XXX4009078F9612109<<<<<<<<"], "alternatives": [[], ["","","","","","","0Q"]]}

            """
        let r = try run(["mrz", "parse", "--jsonl"], stdin: input)
        XCTAssertEqual(r.status, 1)      // one input is not valid
        let results = try r.out.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(results.count, 4)
        XCTAssertEqual(results.map { $0["format"] as? String }, ["TD2", "UNKNOWN", "MRV-B", "MRV-B"])
        XCTAssertEqual(results.map { $0["valid"] as? Bool }, [true, false, true, true])
        XCTAssertEqual((results[1]["errors"] as? [String])?.first,
                       "input line 2 is neither a JSON array of strings nor an object with \"lines\"")
        let correction = (results[3]["corrections"] as? [[String: Any]])?.first
        XCTAssertEqual(correction?["source"] as? String, "ocr_alternative")
        XCTAssertEqual(correction?["to"] as? String, "0")
    }

    func testUsageErrors() throws {
        _ = try idvd
        XCTAssertEqual(try run(["mrz"]).status, 2)
        let bad = try run(["mrz", "parse", "--reference-date", "yesterday", "x"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.err.contains("--reference-date must be YYYY-MM-DD"), bad.err)
        XCTAssertEqual(try run(["mrz", "parse", "--expiry-window", "-3", "x"]).status, 2)
    }
}
