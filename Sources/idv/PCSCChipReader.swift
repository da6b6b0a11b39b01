import ChipAccess
import ChipAccessOpenSSL
import ChipAccessPCSC
import Foundation
import IDVCore
import IDVKit

/// `idv --chip-reader pcsc[:NAME]`: the document step reads the passport chip on a PC/SC reader (ICAO 9303-11 with
/// the `ChipAccess` library) and answers the server's Active Authentication challenge.
///
/// After the pages are captured the SDK calls ``readChip(workflow:challenge:)`` with the upload challenge's
/// `chip_challenge` (IDVCore ``ChipChallengePayload``). The app asks the `chip-access` screen for the chip's key —
/// `mrz LINE1 LINE2 [LINE3]` (BAC, or PACE with the MRZ) or `can NUMBER` (PACE with the card access number printed
/// on the card) — or `skip` (the upload goes on with the pages alone). The chip is read with PACE first, BAC when
/// it offers no PACE; Chip Authentication runs when DG14 offers it and Active Authentication signs the server's
/// 8-octet challenge when the chip has DG15. The files, the signature and Chip Authentication's outcome go to the
/// server in `payload.chip`; the server verifies the signature over its own copy of the challenge.
///
/// A wrong MRZ or CAN (the chip's 6300 / 63Cx) is said on the screen (`chip: access denied — …`) and the screen is
/// asked again; no reader, no card within `wait` seconds, a card removed mid-read, a timeout or a secure-messaging
/// failure end the capture with a ``CaptureError`` naming it (the SDK answers 1008: nothing is uploaded).
///
/// Two-part upload (``ChipReaderAfterPages``): the SDK sends the pages with `"chip_follows": true` and the server,
/// having read the MRZ on the photo, asks `readIDVDocumentChip` with SHA-1(MRZ_information). The chip is opened with
/// that digest (BAC K_seed, or PACE with the MRZ password) and nothing is typed; the `chip-access` screen asks the
/// holder only when the server read no MRZ (`can_required`) or the chip refuses the digest (a chip that offers PACE
/// with the CAN only, or a misread MRZ).
final class PCSCChipReader: ChipReaderAfterPages, @unchecked Sendable {
    // @unchecked: immutable after init; it asks on the SDK work queue while the screens wait (as PresencePrompt).
    let readerName: String?
    let wait: Double
    let ui: Terminal
    let answers: AnswerSource

    /// `spec` is the option's value: `pcsc` (the first reader with a card) or `pcsc:NAME` (a reader's name or a
    /// unique part of it); nil when it is neither.
    init?(spec: String, wait: Double = 15, ui: Terminal, answers: AnswerSource) {
        guard spec == "pcsc" || spec.hasPrefix("pcsc:") else { return nil }
        let name = spec.dropFirst(4).drop { $0 == ":" }
        readerName = name.isEmpty ? nil : String(name)
        self.wait = wait
        self.ui = ui
        self.answers = answers
    }

    func readChip(workflow: RDNAIDVWorkflow, request: RDNAChipReadRequest) throws(CaptureError) -> CapturedChip? {
        if !request.canRequired, let octets = request.mrzInformationDigest, let digest = try? MRZInformationDigest(octets: octets) {
            ui.screen("chip-access", "Place the document on the reader. Its chip opens with the MRZ read from the photo.")
            do {
                return try read(.mrzDigest(digest), challenge: request.challenge)
            } catch ChipAccessError.accessDenied {
                ui.fact("chip", "the chip refused the MRZ read from the photo; give its CAN or MRZ")
            } catch let e as ChipAccessError {
                switch e {
                case .unsupportedProtocol, .unexpectedStatus, .authenticationFailed:
                    // PACE with the CAN only, or a chip that would not take the MRZ password.
                    ui.fact("chip", "the chip did not open with the MRZ (\(e.description)); give its CAN")
                default:
                    ui.fact("chip", "not read: \(e.description)")
                    throw CaptureError("chip reading: \(e.description)")
                }
            } catch {
                throw CaptureError("chip reading: \(error)")
            }
        }
        return try readChip(workflow: workflow, challenge: request.challenge)
    }

    func readChip(workflow: RDNAIDVWorkflow, challenge: RDNAChipChallenge?) throws(CaptureError) -> CapturedChip? {
        while true {
            ui.screen("chip-access", "Place the document on the reader. Its chip opens with the MRZ or the CAN.")
            let answer: String
            do { answer = try answers.answer(for: "chip-access", hint: "mrz LINE1 LINE2 [LINE3] | can NUMBER | skip") } catch {
                throw CaptureError("chip reading: \(error.message)")
            }
            let words = answer.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let verb = words.first?.lowercased() else { ui.fact("error", "an empty answer"); continue }
            let key: AccessKey
            do {
                switch verb {
                case "skip":
                    ui.fact("chip", "not read (skipped)")
                    return nil
                case "mrz" where (3...4).contains(words.count): key = .mrz(try MRZKey(mrzLines: Array(words.dropFirst())))
                case "can" where words.count == 2: key = try AccessKey.canNumber(words[1])
                default:
                    ui.fact("error", "not one of: mrz LINE1 LINE2 [LINE3] | can NUMBER | skip")
                    continue
                }
            } catch {
                ui.fact("error", "unusable key: \(error)")
                continue
            }
            do {
                return try read(key, challenge: challenge)
            } catch ChipAccessError.accessDenied(_, _, let triesLeft) {
                // The message names neither the MRZ nor the CAN.
                ui.fact("chip", "access denied — the chip refused the MRZ or CAN" + (triesLeft.map { " (\($0) tries left)" } ?? ""))
            } catch let e as ChipAccessError {
                ui.fact("chip", "not read: \(e.description)")
                throw CaptureError("chip reading: \(e.description)")
            } catch {
                throw CaptureError("chip reading: \(error)")
            }
        }
    }

    /// One read: the reader's card, PACE or BAC, files, CA, AA on the server's challenge.
    private func read(_ key: AccessKey, challenge: RDNAChipChallenge?) throws -> CapturedChip {
        let context = try PCSCContext()
        let name = try readerName.map { try context.reader(named: $0) }
        let readerWithCard = try context.waitForCard(in: name, timeout: wait)
        let transport = try context.connect(to: readerWithCard, timeout: PCSCTransport.defaultTimeout)
        defer { transport.close() }
        let reader = EMRTDReader(transport: transport, crypto: OpenSSLChipCryptography())
        let options = ChipReadOptions(chipAuthentication: true, activeAuthenticationChallenge: challenge?.activeAuthenticationChallenge)
        let result = try reader.read(key, options: options)
        guard let sod = result.sod else { throw ChipAccessError.malformedResponse("the chip has no EF.SOD") }
        var ran = [result.accessControl.accessProtocol.rawValue]
        let ca: ChipAuthenticationReport
        switch result.chipAuthentication {
        case .succeeded: ca = .verified; ran.append("CA")
        case .failed: ca = .failed
        case .notOffered: ca = .notSupported
        case .notRun: ca = .notPerformed
        }
        var aa: ChipActiveAuthentication?
        if case let .signed(c, signature) = result.activeAuthentication {
            aa = ChipActiveAuthentication(challenge: c, signature: Data(signature))
            ran.append("AA")
        }
        ui.fact("chip reader", readerWithCard)
        ui.fact("chip access control", "\(result.accessControl)")
        ui.fact("chip authentication", "\(result.chipAuthentication)")
        ui.fact("active authentication", "\(result.activeAuthentication)")
        ui.fact("chip protocols", ran.joined(separator: " "))
        return CapturedChip(sod: Data(sod), com: result.com.map { Data($0) }, dataGroups: result.dataGroups.mapValues { Data($0) },
                            activeAuthentication: aa, chipAuthentication: ca)
    }
}
