import DocumentReader
import EMRTD
import IDVTools
import Imaging
import Foundation

/// `idvd specimen --chip`: the chip folder of each specimen document (files, EF.CardAccess, the chip's keys and CAN
/// under `private/`; EMRTD `SpecimenChipSecurity`), its variants, and the test PKI.
/// Each chip is signed under a test CSCA of the document's own issuing state (X.509 `C` = the state's ISO 3166-1
/// alpha-2 code, ICAO 9303-12 §7.1; `UT` for Utopia), made when a state first appears; `test-pki/csca.cer` and
/// `test-pki/csca.crl` are PEM bundles of every CSCA and CRL made so far (the foreign-csca variant's state's too).
final class ChipSpecimenWriter {
    let out: String
    let seed: UInt64
    let jpeg: Bool
    let swapPortrait: RGBImage?
    /// X.509 country → its test PKI, in the order made.
    private var pkis: [(country: String, pki: TestPKI)] = []

    /// What the specimen's ground-truth JSON says about its chip.
    struct Truth: Encodable {
        let directory: String
        let trust: String
        let portrait_format: String
        /// The X.509 country of the CSCA and DSC that signed the chip (the issuing state's; Utopia's `UT` when the
        /// issuing state has none, e.g. `XXA`).
        let csca_country: String
        /// Whether that country does not stand for DG1's issuing state: the server's policy then rejects the
        /// genuine chip too (`signer_country_mismatch`).
        let signer_country_differs: Bool
        /// The genuine chip's Active Authentication key (`rsa-2048`) and what Active Authentication gives for a
        /// signature its `private/aa-key.pem` makes (`verified`).
        let active_authentication: String
        let expected_active_authentication: String
        /// The card access number (also in `<directory>/private/can.txt`).
        let can: String
        /// Variant name → its directory and the failures passive authentication reports for it.
        let variants: [String: Variant]
        struct Variant: Encodable {
            let directory: String; let expected_failures: [String]; let mismatched_data_group: Int?; let signer_country_differs: Bool
            /// The variant's AA key kind (`rsa-2048`, `ecdsa-p256`; nil: no DG15) and what Active Authentication gives
            /// for a signature its `private/aa-key.pem` makes over the verifier's challenge (`verified`, `failed` for
            /// the copy, `not_supported`, `key_not_authenticated`).
            let active_authentication: String?; let expected_active_authentication: String
        }
    }

    init(out: String, options o: [String: String]) throws {
        self.out = out
        guard let seed = UInt64(o["pki-seed"] ?? "1") else { throw CLIError("--pki-seed must be a non-negative integer") }
        self.seed = seed
        jpeg = o["chip-jpeg"] != nil
        if let p = o["swap-portrait"] {
            do { swapPortrait = try DocumentImage.decode(path: p).rgb } catch { throw CLIError("--swap-portrait: \(error)") }
        } else {
            swapPortrait = nil
        }
        try FileManager.default.createDirectory(atPath: out + "/test-pki", withIntermediateDirectories: true)
    }

    /// The test PKI of X.509 country `country`, made (and added to the test-pki bundles) on first use.
    func pki(_ country: String) throws -> TestPKI {
        if let p = pkis.first(where: { $0.country == country }) { return p.pki }
        let p = try TestPKI(seed: seed, country: country)
        pkis.append((country, p))
        func pem(_ label: String, _ der: [UInt8]) -> String {
            let b64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            return "-----BEGIN \(label)-----\n\(b64)\n-----END \(label)-----\n"
        }
        let dir = out + "/test-pki"
        try Data(pkis.map { pem("CERTIFICATE", $0.pki.csca.der) }.joined().utf8).write(to: URL(fileURLWithPath: dir + "/csca.cer"))
        try Data(pkis.map { pem("X509 CRL", $0.pki.crl.der) }.joined().utf8).write(to: URL(fileURLWithPath: dir + "/csca.crl"))
        return p
    }

    func face(_ rgb: RGBImage) throws -> SpecimenChip.Face {
        if jpeg {
            let data = try Imaging.Image(rgb: rgb.pixels, width: rgb.width, height: rgb.height).jpegData(quality: 90)
            return SpecimenChip.Face(image: [UInt8](data), type: .jpeg, width: rgb.width, height: rgb.height)
        }
        let j2k = try JPEG2000.encode(PortraitPixels(width: rgb.width, height: rgb.height, channels: 3, pixels: rgb.pixels), ratio: 12)
        return SpecimenChip.Face(image: j2k, type: .jpeg2000, width: rgb.width, height: rgb.height)
    }

    static func mirrored(_ i: RGBImage) -> RGBImage {
        var p = i.pixels
        for y in 0..<i.height { for x in 0..<i.width {
            let s = (y * i.width + (i.width - 1 - x)) * 3, d = (y * i.width + x) * 3
            p[d] = i.pixels[s]; p[d + 1] = i.pixels[s + 1]; p[d + 2] = i.pixels[s + 2]
        } }
        return RGBImage(width: i.width, height: i.height, pixels: p)
    }

    func write(_ specimen: Specimen, name: String) throws -> Truth {
        let portrait = SpecimenGenerator.portrait(of: specimen)
        let main = try face(portrait)
        let other = try face(swapPortrait ?? Self.mirrored(portrait))
        let chipDir = name + ".chip"
        var variants: [String: Truth.Variant] = [:]
        let state = IssuingStateEvidence(dg1: specimen.mrzLines)
        let own = state.flatMap { TestPKI.country(ofIssuingState: $0.code) }
        let pki = try self.pki(own ?? "UT")
        let foreign = try self.pki(SpecimenChip.foreignCountry(for: pki.country))
        // The chip's keys (AA, CA) and CAN derive from the test-PKI seed and the document's MRZ: the same every run.
        let keys = try SpecimenChip.Keys(seed: "OpenIDV specimen chip \(seed) " + specimen.mrzLines.joined())
        for (v, folder) in try SpecimenChip.makeFolders(mrzLines: specimen.mrzLines, face: main, swappedFace: other, pki: pki, foreign: foreign,
                                                        keys: keys) {
            let rel = v == .genuine ? chipDir : chipDir + "/variants/" + v.rawValue
            try SpecimenChip.write(folder, to: out + "/" + rel)
            if v != .genuine {
                variants[v.rawValue] = Truth.Variant(directory: rel, expected_failures: v.expectedFailures.map(\.rawValue),
                                                     mismatched_data_group: v.mismatchedDataGroup,
                                                     signer_country_differs: own == nil || v.signerCountryDiffers,
                                                     active_authentication: v.activeAuthenticationKind?.rawValue,
                                                     expected_active_authentication: v.expectedActiveAuthentication.rawValue)
            }
        }
        return Truth(directory: chipDir, trust: "test-pki", portrait_format: jpeg ? "jpeg" : "jpeg2000", csca_country: pki.country,
                     signer_country_differs: own == nil,
                     active_authentication: SpecimenChip.Variant.genuine.activeAuthenticationKind?.rawValue ?? "none",
                     expected_active_authentication: SpecimenChip.Variant.genuine.expectedActiveAuthentication.rawValue,
                     can: keys.rsa.cardAccessNumber, variants: variants)
    }
}
