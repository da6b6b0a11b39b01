import Foundation
import IDVCore

/// The raw elementary files of an eMRTD chip (ICAO 9303-10 LDS1), exactly as read: EF.SOD is required,
/// EF.COM and the data groups (1…16) are what the reader could read — and what the chip answered to the server's
/// challenge: its Active Authentication signature (ICAO 9303-11 §6.1) and Chip Authentication's outcome (§6.2).
/// The server verifies them (passive authentication, §5.1; Active Authentication over its own challenge); the SDK
/// only carries them.
public struct CapturedChip: Sendable, Equatable {
    public var sod: Data
    public var com: Data?
    public var dataGroups: [Int: Data]
    /// The chip's INTERNAL AUTHENTICATE response to the server's challenge; nil when the reader did not run Active
    /// Authentication (no DG15, no challenge, or a reader of files).
    public var activeAuthentication: ChipActiveAuthentication?
    /// Chip Authentication as the reader ran it; nil when it does not report one.
    public var chipAuthentication: ChipAuthenticationReport?
    public init(sod: Data, com: Data? = nil, dataGroups: [Int: Data] = [:], activeAuthentication: ChipActiveAuthentication? = nil,
                chipAuthentication: ChipAuthenticationReport? = nil) {
        self.sod = sod; self.com = com; self.dataGroups = dataGroups
        self.activeAuthentication = activeAuthentication
        self.chipAuthentication = chipAuthentication
    }
}

/// The chip's Active Authentication response (ICAO 9303-11 §6.1): the challenge it signed — the server's, from
/// ``RDNAChipChallenge`` — and the signature as INTERNAL AUTHENTICATE returned it (RSA: ISO/IEC 9796-2, as long as the
/// modulus; ECDSA: r ‖ s).
public struct ChipActiveAuthentication: Sendable, Equatable {
    /// The 8-byte challenge the chip signed.
    public var challenge: [UInt8]
    public var signature: Data
    public init(challenge: [UInt8], signature: Data) {
        self.challenge = challenge
        self.signature = signature
    }
}

extension CapturedChip {
    /// The files (base64) and the chip's answers as the document step's `chip` payload (IDVCore ``ChipFilesPayload``).
    public var payload: ChipFilesPayload {
        ChipFilesPayload(sod: sod, com: com, dataGroups: dataGroups,
                         activeAuthentication: activeAuthentication.map { ActiveAuthenticationAnswer(challenge: $0.challenge, signature: $0.signature) },
                         chipAuthentication: chipAuthentication)
    }
}

/// The server's challenge for the document's chip (the `chip_challenge` of the `uploadIDVDocumentPages` payload,
/// IDVCore ``ChipChallengePayload``; docs/PROTOCOL.md): 8 fresh random bytes the chip must sign with its Active
/// Authentication key (ICAO 9303-11 §6.1, INTERNAL AUTHENTICATE). The server keeps its own copy and verifies the
/// signature over it; a signature over any other challenge (an earlier session's) is refused as replayed. Valid for
/// the one upload that answers it.
public struct RDNAChipChallenge: Sendable, Equatable {
    /// The 8 bytes to sign.
    public var activeAuthenticationChallenge: [UInt8]
    /// When the step expires (server clock).
    public var expiresAt: Date

    public init(activeAuthenticationChallenge: [UInt8], expiresAt: Date) {
        self.activeAuthenticationChallenge = activeAuthenticationChallenge
        self.expiresAt = expiresAt
    }

    /// The challenge of an upload challenge's `payload`, or nil when it has none (a server that verifies no chips)
    /// or it is malformed.
    public init?(payload: JSONValue) {
        guard let c = (try? payload.decode(DocumentUploadRequest.self))?.chipChallenge, let bytes = c.challenge else { return nil }
        self.init(activeAuthenticationChallenge: bytes, expiresAt: Date(timeIntervalSince1970: TimeInterval(c.expiresAt)))
    }
}

/// Reads the document's chip after the page capture, when the document has one. On a phone: the app's NFC
/// stack (ISO 14443 / ISO 7816 with BAC or PACE, keyed from the MRZ or the CAN); on Linux: PC/SC, or files.
/// Returns nil when there is no chip to read (the document step then goes on with the page images alone).
public protocol ChipReaderProvider: Sendable {
    /// Reads the chip. `challenge` is the server's (nil when it issued none): a reader that talks to the chip runs
    /// Active Authentication on its `activeAuthenticationChallenge` when the chip has a DG15 key and returns the
    /// signature in ``CapturedChip/activeAuthentication`` with that challenge — the server verifies it over its own
    /// copy. Without it the server reports the chip authentic at best, "a copy is not excluded".
    func readChip(workflow: RDNAIDVWorkflow, challenge: RDNAChipChallenge?) throws(CaptureError) -> CapturedChip?
}

/// Linux/desktop chip reading: the EF files of one chip in a folder. Accepts the names `idvd specimen --chip`
/// writes (`EF_SOD.bin`, `EF_COM.bin`, `DG1.bin` …), JMRTD's by file identifier (`ef011D.bin`, `ef011E.bin`,
/// `ef0101.bin` …) and `Datagroup1.bin` … (a `private/` folder and `EF_CardAccess.bin` are not read). A folder
/// without an EF.SOD is an error, not "no chip". Files are a copy of a chip, not a chip: nothing here can answer
/// the server's challenge, so Active Authentication is not performed (the server's verdict: "a copy is not
/// excluded", WARNING).
public struct FileChipReader: ChipReaderProvider {
    public let folder: URL
    /// Largest EF accepted (DG2 portraits are tens of KiB; DG3 fingerprints can reach a few hundred).
    public static let maxFileBytes = 4 * 1024 * 1024

    public init(folder: URL) { self.folder = folder }

    public func readChip(workflow: RDNAIDVWorkflow, challenge: RDNAChipChallenge? = nil) throws(CaptureError) -> CapturedChip? {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder.path) } catch {
            throw CaptureError("cannot read the chip folder \(folder.lastPathComponent)")
        }
        var sod: Data?, com: Data?
        var groups: [Int: Data] = [:]
        for name in names.sorted() {
            let lower = name.lowercased()
            guard lower.hasSuffix(".bin") else { continue }
            let stem = String(lower.dropLast(4))
            let url = folder.appendingPathComponent(name)
            if stem == "ef_sod" || stem == "ef011d" || stem == "sod" { sod = try Self.read(url) }
            else if stem == "ef_com" || stem == "ef011e" || stem == "com" { com = try Self.read(url) }
            else if let n = Self.dataGroup(stem) { groups[n] = try Self.read(url) }
        }
        guard let sod else { throw CaptureError("the chip folder \(folder.lastPathComponent) has no EF_SOD.bin (or ef011D.bin)") }
        return CapturedChip(sod: sod, com: com, dataGroups: groups)
    }

    /// "dg2", "datagroup2" → 2; "ef0102" → 2 (file identifiers 0101…0110).
    static func dataGroup(_ stem: String) -> Int? {
        var n: Int?
        if stem.hasPrefix("datagroup") { n = Int(stem.dropFirst(9)) }
        else if stem.hasPrefix("dg") { n = Int(stem.dropFirst(2)) }
        else if stem.hasPrefix("ef01"), stem.count == 6 { n = Int(stem.dropFirst(4), radix: 16) }
        guard let n, (1...16).contains(n) else { return nil }
        return n
    }

    static func read(_ url: URL) throws(CaptureError) -> Data {
        let attrs: [FileAttributeKey: Any]
        do { attrs = try FileManager.default.attributesOfItem(atPath: url.path) } catch {
            throw CaptureError("cannot read \(url.lastPathComponent): no such file")
        }
        let size = (attrs[.size] as? NSNumber)?.intValue ?? 0
        guard size > 0 else { throw CaptureError("\(url.lastPathComponent) is empty") }
        guard size <= maxFileBytes else { throw CaptureError("\(url.lastPathComponent) is larger than \(maxFileBytes / 1_048_576) MiB") }
        do { return try Data(contentsOf: url) } catch { throw CaptureError("cannot read \(url.lastPathComponent)") }
    }
}

/// The server's request to read the chip after the pages (`readIDVDocumentChip`, IDVCore ``DocumentChipReadRequest``;
/// docs/CHIP.md): asked when a ``ChipReaderAfterPages`` provider is set and the server verifies chips. The server read
/// the MRZ on the photo and hands the chip's access key as SHA-1(MRZ_information) (ICAO 9303-11 §9.7.2) — BAC's
/// K_seed is its first 16 octets, PACE's MRZ password the whole digest — so the holder types nothing.
public struct RDNAChipReadRequest: Sendable, Equatable {
    /// The Active Authentication challenge to sign (nil when the payload carries none).
    public var challenge: RDNAChipChallenge?
    /// SHA-1(MRZ_information), 20 octets; nil when the server read no MRZ (ask the holder for the MRZ or the CAN).
    /// A secret of the session: never log it.
    public var mrzInformationDigest: [UInt8]?
    /// True when only the holder's CAN (or typed MRZ) can open the chip: the server has no MRZ to offer.
    public var canRequired: Bool

    public init(challenge: RDNAChipChallenge?, mrzInformationDigest: [UInt8]?, canRequired: Bool) {
        self.challenge = challenge
        self.mrzInformationDigest = mrzInformationDigest
        self.canRequired = canRequired
    }

    /// The request of a `readIDVDocumentChip` challenge's `payload`; nil when it is not one.
    public init?(payload: JSONValue) {
        guard let r = try? payload.decode(DocumentChipReadRequest.self) else { return nil }
        let challenge = r.chipChallenge.flatMap { c in
            c.challenge.map { RDNAChipChallenge(activeAuthenticationChallenge: $0, expiresAt: Date(timeIntervalSince1970: TimeInterval(c.expiresAt))) }
        }
        self.init(challenge: challenge, mrzInformationDigest: r.digest, canRequired: r.canRequired)
    }
}

/// A chip reader that reads after the pages were sent, keyed by the server (`"chip_follows": true`, then
/// `readIDVDocumentChip`): with it set, the SDK uploads the pages alone and, when the server asks, calls
/// ``readChip(workflow:request:)`` with the server's Active Authentication challenge and SHA-1(MRZ_information) from
/// the MRZ it read. A server that verifies no chips never asks; the pages are then the whole upload. Returns nil when
/// the chip is not read (the server judges the pages alone); throws ``CaptureError/cancelledByUser`` to cancel.
public protocol ChipReaderAfterPages: ChipReaderProvider {
    func readChip(workflow: RDNAIDVWorkflow, request: RDNAChipReadRequest) throws(CaptureError) -> CapturedChip?
}
