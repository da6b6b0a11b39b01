import DocumentReader
import EMRTD
import IDVTools
import Imaging
import Foundation

/// `idvd specimen --chip`: the chip files of each specimen document, their tampered variants, and the test PKI.
struct ChipSpecimenWriter {
    let out: String
    let pki: TestPKI
    let jpeg: Bool
    let swapPortrait: RGBImage?

    /// What the specimen's ground-truth JSON says about its chip.
    struct Truth: Encodable {
        let directory: String
        let trust: String
        let portrait_format: String
        /// Variant name → its directory and the failures passive authentication reports for it.
        let variants: [String: Variant]
        struct Variant: Encodable { let directory: String; let expected_failures: [String]; let mismatched_data_group: Int? }
    }

    init(out: String, options o: [String: String]) throws {
        self.out = out
        guard let seed = UInt64(o["pki-seed"] ?? "1") else { throw CLIError("--pki-seed must be a non-negative integer") }
        pki = try TestPKI(seed: seed)
        jpeg = o["chip-jpeg"] != nil
        if let p = o["swap-portrait"] {
            do { swapPortrait = try DocumentImage.decode(path: p).rgb } catch { throw CLIError("--swap-portrait: \(error)") }
        } else {
            swapPortrait = nil
        }
        let dir = out + "/test-pki"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(pki.csca.der).write(to: URL(fileURLWithPath: dir + "/csca.cer"))
        try Data(pki.crl.der).write(to: URL(fileURLWithPath: dir + "/csca.crl"))
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
        for v in SpecimenChip.Variant.allCases {
            let files = try SpecimenChip.make(mrzLines: specimen.mrzLines, face: main, swappedFace: other, pki: pki, variant: v)
            let rel = v == .genuine ? chipDir : chipDir + "/variants/" + v.rawValue
            try SpecimenChip.write(files, to: out + "/" + rel)
            if v != .genuine {
                variants[v.rawValue] = Truth.Variant(directory: rel, expected_failures: v.expectedFailures.map(\.rawValue),
                                                     mismatched_data_group: v.mismatchedDataGroup)
            }
        }
        return Truth(directory: chipDir, trust: "test-pki", portrait_format: jpeg ? "jpeg" : "jpeg2000", variants: variants)
    }
}
