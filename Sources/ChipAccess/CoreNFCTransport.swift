#if canImport(CoreNFC)
import CoreNFC
import Dispatch
import Foundation

/// `ChipTransport` over CoreNFC's ISO 7816 tag (an eMRTD found by an `NFCTagReaderSession` polling ISO 14443):
/// each APDU is `sendCommand(apdu:)`, waited for at most `timeout` seconds (`ChipAccessError.timeout`); a tag that
/// left the field is `ChipAccessError.cardRemoved`. Compiled only where CoreNFC exists (iOS); the app must list
/// the eMRTD AID A0000002471001 under `com.apple.developer.nfc.readersession.iso7816.select-identifiers` and call
/// the reader off the main thread (it blocks while the tag answers on CoreNFC's queue).
@available(iOS 13.0, *)
public final class CoreNFCTransport: ChipTransport, @unchecked Sendable {
    let tag: NFCISO7816Tag
    /// The per-APDU limit in seconds.
    public var timeout: Double

    public init(tag: NFCISO7816Tag, timeout: Double = 10) {
        self.tag = tag
        self.timeout = timeout
    }

    public var name: String { "NFC ISO 7816 tag" }

    /// From the ATS historical bytes' card capabilities (ISO/IEC 7816-4 §12.1.1.9).
    public var supportsExtendedLength: Bool {
        AnswerToReset.supportsExtendedLength(historicalBytes: tag.historicalBytes.map { [UInt8]($0) } ?? [])
    }

    private final class Outcome: @unchecked Sendable {
        var bytes: [UInt8]?
        var error: Error?
    }

    public func transmit(_ apdu: [UInt8]) throws -> [UInt8] {
        let what = CommandAPDU(parsing: apdu)?.instructionName ?? "a command"
        guard let command = NFCISO7816APDU(data: Data(apdu)) else {
            throw ChipAccessError.invalidInput("CoreNFC cannot send \(what) as an ISO 7816 APDU")
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        tag.sendCommand(apdu: command) { data, sw1, sw2, error in
            if let error { outcome.error = error } else { outcome.bytes = [UInt8](data) + [sw1, sw2] }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { throw ChipAccessError.timeout(command: what, seconds: timeout) }
        if let bytes = outcome.bytes { return bytes }
        if let nfc = outcome.error as? NFCReaderError {
            switch nfc.code {
            case .readerTransceiveErrorTagConnectionLost, .readerTransceiveErrorTagNotConnected, .readerTransceiveErrorTagResponseError,
                 .readerSessionInvalidationErrorSessionTimeout, .readerSessionInvalidationErrorSessionTerminatedUnexpectedly:
                throw ChipAccessError.cardRemoved(during: what)
            case .readerSessionInvalidationErrorUserCanceled:
                throw ChipAccessError.noCard("the NFC session was cancelled")
            default:
                throw ChipAccessError.transport("CoreNFC (\(what)): \(nfc.localizedDescription)")
            }
        }
        throw ChipAccessError.transport("CoreNFC (\(what)): \(outcome.error.map { "\($0)" } ?? "no answer")")
    }
}
#endif
