import EMRTD
import Foundation
import IDVCore

/// A specimen chip folder (`idvd specimen --chip`, EMRTD `SpecimenChipSecurity`) answering the server's chip
/// challenge the way the chip would: its files, and — with `<chip>/private/aa-key.pem` — the Active Authentication
/// signature (ICAO 9303-11 §6.1; RSA ISO/IEC 9796-2 with SHA-256, ECDSA with DG14's named hash) over the challenge,
/// made through OpenSSL. For tests: the real PC/SC path is the chip-access library's.
public enum SimulatedChip {
    /// The files of the folder `chipDirectory` (`EF_SOD.bin`, `EF_COM.bin`, `DG<n>.bin`; not `private/`).
    public static func files(_ chipDirectory: URL) throws -> ChipFiles { try ChipFiles.read(directory: chipDirectory.path) }

    /// The chip's signature over `challenge` with its folder's AA key; nil when the folder has none (no DG15).
    public static func signature(_ chipDirectory: URL, challenge: [UInt8]) throws -> Data? {
        try SpecimenChipSecurity.activeAuthenticationSignature(challenge: challenge, chipDirectory: chipDirectory.path).map { Data($0) }
    }

    /// The upload answer's `payload.chip` (IDVCore ``ChipFilesPayload``): the folder's files, and when `challenge`
    /// is given and the folder has an AA key, the chip's answer to it (`active_authentication`: the challenge echoed
    /// and the signature). `signedChallenge` makes the chip sign another challenge than the one echoed (a replayed
    /// signature under the current challenge); `chipAuthentication` is the Chip Authentication outcome to report.
    public static func payload(_ chipDirectory: URL, challenge: [UInt8]?, signedChallenge: [UInt8]? = nil,
                               chipAuthentication: ChipAuthenticationReport? = nil) throws -> ChipFilesPayload {
        let f = try files(chipDirectory)
        var answer: ActiveAuthenticationAnswer?
        if let challenge, let sig = try signature(chipDirectory, challenge: signedChallenge ?? challenge) {
            answer = ActiveAuthenticationAnswer(challenge: challenge, signature: sig)
        }
        return ChipFilesPayload(sod: Data(f.sod), com: f.com.map { Data($0) }, dataGroups: f.dataGroups.mapValues { Data($0) },
                                activeAuthentication: answer, chipAuthentication: chipAuthentication)
    }

    /// The chip challenge in an `uploadIDVDocumentPages` challenge's payload (`chip_challenge`), nil when none.
    public static func challenge(in payload: JSONValue) -> ChipChallengePayload? {
        (try? payload.decode(DocumentUploadRequest.self))?.chipChallenge
    }
}
