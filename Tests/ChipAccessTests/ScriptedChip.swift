import ChipAccess
import EMRTDCore
import XCTest

/// A transport that replays a worked example of a standard: each command the terminal sends must be exactly the
/// next one the example prints, and the chip's answer is the example's. It stands for nothing but the document
/// (ICAO 9303-11 Appendices D and G); a real chip is the virtual eMRTD through pcscd (`PCSCReadTests`).
final class ScriptedChip: ChipTransport {
    struct Exchange { let command: [UInt8]; let response: [UInt8] }
    private var script: [Exchange]
    let name = "the worked example"
    let supportsExtendedLength = false
    let file: StaticString
    let line: UInt

    init(_ pairs: [(String, String)], file: StaticString = #filePath, line: UInt = #line) {
        script = pairs.map { Exchange(command: Bytes.hex($0.0), response: Bytes.hex($0.1)) }
        self.file = file; self.line = line
    }

    var finished: Bool { script.isEmpty }

    func transmit(_ apdu: [UInt8]) throws -> [UInt8] {
        guard !script.isEmpty else {
            XCTFail("the terminal sent \(Bytes.hexString(apdu)) after the example ended", file: file, line: line)
            throw ChipAccessError.transport("script ended")
        }
        let next = script.removeFirst()
        XCTAssertEqual(Bytes.hexString(apdu), Bytes.hexString(next.command), "the terminal's command differs from the example's", file: file, line: line)
        return next.response
    }
}
