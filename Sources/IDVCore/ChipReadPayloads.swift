import Foundation

// The document step in two parts, for a client that reads the chip itself (ICAO 9303-11 §4.3 BAC, §4.4 PACE):
//
//   uploadIDVDocumentPages answer:      {"pages": [...], "chip_follows": true}        (opt-in; without it, as before)
//   readIDVDocumentChip challenge:      DocumentChipReadRequest
//   readIDVDocumentChip answer:         DocumentChipAnswer (the chip files + AA signature, or a skip)
//
// The server reads the pages first, so it can hand the client SHA-1(MRZ_information) from the MRZ it read from the
// photo: the holder types nothing, and the document number and dates never travel in the clear.

extension WireName {
    /// The chip read after the pages (answer on `POST /v1/session/upload`): the payload is
    /// ``DocumentChipReadRequest``; the answer ``DocumentChipAnswer``. Asked only when the page upload said
    /// `"chip_follows": true` and the pages were read.
    public static let readIDVDocumentChip = "readIDVDocumentChip"
}

/// The `payload` of `readIDVDocumentChip`:
/// `{"chip_challenge": ChipChallengePayload, "mrz_information_digest": "<40 hex>", "can_required": false}`.
public struct DocumentChipReadRequest: Codable, Equatable, Sendable {
    /// The Active Authentication challenge for this answer (fresh, single-use; as in today's upload challenge).
    public var chipChallenge: ChipChallengePayload?
    /// SHA-1(MRZ_information) (ICAO 9303-11 §9.7.2: document number, date of birth, date of expiry and their check
    /// digits, from the MRZ the server read on the data page), 40 lowercase hexadecimal digits: BAC's K_seed is its
    /// first 16 octets, PACE's MRZ password is the whole digest (§9.7.3). Absent when the server read no MRZ: the
    /// client then asks the holder for the MRZ or the CAN. A secret of the session: never logged.
    public var mrzInformationDigest: String?
    /// True when the server has no MRZ to open the chip with: only the holder's CAN (or typed MRZ) can open it.
    public var canRequired: Bool

    public static let digestHexLength = 40

    enum CodingKeys: String, CodingKey {
        case chipChallenge = "chip_challenge", mrzInformationDigest = "mrz_information_digest", canRequired = "can_required"
    }

    public init(chipChallenge: ChipChallengePayload?, mrzInformationDigest: [UInt8]?) {
        self.chipChallenge = chipChallenge
        self.mrzInformationDigest = mrzInformationDigest.map(ChipHex.encode)
        canRequired = mrzInformationDigest == nil
    }

    /// The digest's 20 octets; nil when absent or not 40 hexadecimal digits.
    public var digest: [UInt8]? {
        guard let h = mrzInformationDigest, h.count == Self.digestHexLength, let b = ChipHex.decode(h) else { return nil }
        return b
    }
}

/// `readIDVDocumentChip`: `{"chip": ChipFilesPayload}` (the files and `active_authentication` over the request's
/// `chip_challenge`, as in the one-upload shape), `{"skip": true}` (no chip read: the document is judged on its
/// pages, as an upload without chip files), or `{"cancel": true}`.
public struct DocumentChipAnswer: ChallengeAnswer {
    public static let challenges = [WireName.readIDVDocumentChip]
    public var chip: ChipFilesPayload?
    public var skip: Bool?
    public var cancel: Bool?
    public init(chip: ChipFilesPayload?) {
        self.chip = chip
        skip = chip == nil ? true : nil
    }
}
