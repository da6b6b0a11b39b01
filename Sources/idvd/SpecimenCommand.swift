import DocumentReader
import Foundation
import Imaging
import IDVTools

extension Command {
    static let specimen = Command(name: "specimen", summary: "render fictional specimen TD1/TD3 documents (PNG + ground-truth JSON)") { args in
        let usage = """
        usage: idvd specimen [--format td1|td3|mixed] [--count N] [--seed S] [--out DIR] [--portrait FACE.jpg|png]
                             [--augment] [--width W --height H] [--mrz 'LINE1|LINE2[|LINE3]'] [--jpeg Q | --png]
                             [--chip [--chip-jpeg] [--swap-portrait FACE.jpg|png] [--pki-seed N]] [--sides]
                             [--front-surname NAME] [--mrz-surname NAME] [--surname NAME] [--document-code CODE]
          Writes DIR/specimen-<seed>.png and DIR/specimen-<seed>.json (format, mrz_lines, identity,
          augmentation) for N documents with seeds S, S+1, …  (default: td3, 1, seed 1, out .).
          --augment places each document in a photo-like scene (rotation any angle, perspective,
          blur, noise, JPEG quantisation, lighting gradient, background), canvas W×H (1600×1200).
          --format mixed alternates td1/td3.  --mrz prints the given text (e.g. bad check digits).
          Output is PNG, or JPEG with --jpeg QUALITY (default for --augment: JPEG 92; --png forces PNG).
          --chip also writes the eMRTD chip of each document: DIR/specimen-<seed>.chip/ (EF_COM, DG1 = the printed
          MRZ, DG2 = the printed portrait in JPEG 2000, or JPEG with --chip-jpeg, DG14 = Chip Authentication (EC
          P-256) and PACE, DG15 = the Active Authentication key (RSA-2048), EF_CardAccess (PACE: generic mapping,
          ECDH P-256, AES-128), EF_SOD signed by a test document signer of a test CSCA of the document's own issuing
          state, C=NL for NLD, C=UT for UTO; the chip's secrets in private/: aa-key.pem, ca-key.pem (PKCS#8 PEM) and
          can.txt), its variants in DIR/specimen-<seed>.chip/variants/<name>/ (tampered files; foreign-csca: signed
          under another state's CSCA; aa-ecdsa: an ECDSA P-256 AA key; copy: the same files, another AA private key;
          no-aa: no DG15), and the test CSCAs and CRLs in DIR/test-pki/ (the trust to verify them with: idvd chip
          verify --trust DIR/test-pki). Keys and CAN derive from --pki-seed and the MRZ: the same every run.
          The swapped-DG2 variant uses --swap-portrait, else the portrait mirrored.
          --sides renders each TD1 card as its two sides, as real cards print them (ICAO 9303-5): the front
          (portrait, captioned names and data, no MRZ) to DIR/specimen-<seed>-front.EXT and the back (MRZ,
          fields without names) to DIR/specimen-<seed>-back.EXT; the JSON lists both ("files"). TD3 pages
          are written as without it.  --front-surname prints NAME on the front instead of the identity's
          surname, --mrz-surname prints NAME in the MRZ (check digits stay valid: no TD1 check digit covers the
          name) — a card whose MRZ and front disagree, for the name cross-check.
          --surname NAME prints NAME as the holder's surname everywhere (the visual zone and the MRZ, unless
          --mrz-surname); --document-code CODE prints CODE (one or two characters, e.g. C< or PK: no check digit
          covers it) as the MRZ's document code — with --mrz-surname, pages that print one thing and encode another.
        """
        let (o, pos) = try CLI.parseOptions(args, flags: ["augment", "help", "h", "png", "chip", "chip-jpeg", "sides"],
                                            valued: ["format", "count", "seed", "out", "portrait", "width", "height", "mrz", "jpeg", "swap-portrait",
                                                     "pki-seed", "front-surname", "mrz-surname", "surname", "document-code"], command: "specimen")
        if o["help"] != nil || o["h"] != nil || !pos.isEmpty { print(usage); return pos.isEmpty ? 0 : 2 }
        let formatName = o["format"] ?? "td3"
        guard ["td1", "td3", "mixed"].contains(formatName) else { throw CLIError("--format must be td1, td3 or mixed") }
        guard let count = Int(o["count"] ?? "1"), count > 0, count <= 1_000_000 else { throw CLIError("--count must be a positive integer") }
        guard let seed = UInt64(o["seed"] ?? "1") else { throw CLIError("--seed must be a non-negative integer") }
        let out = o["out"] ?? "."
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        var portrait: RGBImage?
        if let p = o["portrait"] {
            do { portrait = try DocumentImage.decode(path: p).rgb } catch { throw CLIError("--portrait: \(error)") }
        }
        var aug = Augmentation()
        if let w = o["width"] { guard let v = Int(w), v >= 64, v <= 8000 else { throw CLIError("--width must be 64…8000") }; aug.canvasWidth = v }
        if let h = o["height"] { guard let v = Int(h), v >= 64, v <= 8000 else { throw CLIError("--height must be 64…8000") }; aug.canvasHeight = v }
        let fixedLines = o["mrz"].map { $0.split(separator: "|").map(String.init) }
        if o["surname"]?.isEmpty == true { throw CLIError("--surname needs a name") }
        if let c = o["document-code"], !(1...2).contains(c.count) || !c.allSatisfy({ ("A"..."Z").contains($0) || $0 == "<" }) {
            throw CLIError("--document-code must be one or two characters A–Z or <, got '\(c)'")
        }
        struct Truth: Encodable {
            let file: String; let files: [String]?; let format: String; let seed: UInt64; let mrz_lines: [String]
            let identity: SpecimenIdentity; let augmentation: Augmentation?; let chip: ChipSpecimenWriter.Truth?
        }
        let chipWriter = o["chip"] != nil ? try ChipSpecimenWriter(out: out, options: o) : nil
        for i in 0..<count {
            let s = seed &+ UInt64(i)
            let format: SpecimenFormat = formatName == "mixed" ? (s % 2 == 0 ? .td1 : .td3) : (formatName == "td1" ? .td1 : .td3)
            var rng = SeededRNG(seed: s)
            var identity = SpecimenIdentity.random(format, using: &rng)
            if let n = o["surname"] { identity.surname = n }
            if let fixedLines, fixedLines.count != format.lineCount || fixedLines.contains(where: { $0.count != format.lineLength }) {
                throw CLIError("--mrz for \(format.rawValue) needs \(format.lineCount) lines of \(format.lineLength) characters")
            }
            let sides = o["sides"] != nil && format == .td1
            var mrzIdentity = identity
            if let m = o["mrz-surname"] { mrzIdentity.surname = m }
            if let c = o["document-code"] { mrzIdentity.documentCode = c }
            let mrzDiffers = o["mrz-surname"] != nil || o["document-code"] != nil
            var specimen = try SpecimenGenerator.render(identity, format: format, portrait: portrait,
                                                        mrzLines: fixedLines ?? (mrzDiffers ? mrzIdentity.mrzLines(format) : nil), seed: s,
                                                        side: sides ? .back : nil)
            var frontIdentity = identity
            if let f = o["front-surname"] { frontIdentity.surname = f }
            var front = sides ? try SpecimenGenerator.render(frontIdentity, format: format, portrait: portrait, seed: s, side: .front) : nil
            let chipTruth = try chipWriter?.write(specimen, name: "specimen-\(s)")
            var applied: Augmentation?
            if o["augment"] != nil {
                var a = Augmentation.random(using: &rng)
                a.canvasWidth = aug.canvasWidth; a.canvasHeight = aug.canvasHeight
                specimen.image = a.apply(to: specimen.image, seed: s)
                if let f = front { front?.image = a.apply(to: f.image, seed: s &+ 1_000_003) }
                applied = a
            }
            var jpegQuality: Int? = o["augment"] != nil && o["png"] == nil ? 92 : nil
            if let q = o["jpeg"] {
                guard let v = Int(q), (1...100).contains(v) else { throw CLIError("--jpeg must be 1…100") }
                jpegQuality = v
            }
            let name = "specimen-\(s)"
            let ext = jpegQuality == nil ? ".png" : ".jpg"
            let file = name + (sides ? "-back" : "") + ext
            func write(_ image: RGBImage, _ file: String) throws {
                if let q = jpegQuality {
                    try DocumentImage(rgb: image).jpeg(maxDimension: 100_000, quality: q).write(to: URL(fileURLWithPath: out + "/" + file))
                } else {
                    try Raster.encodePNG(image).write(to: URL(fileURLWithPath: out + "/" + file))
                }
            }
            try write(specimen.image, file)
            if let front { try write(front.image, name + "-front" + ext) }
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            try enc.encode(Truth(file: file, files: front == nil ? nil : [name + "-front" + ext, file], format: format.rawValue, seed: s, mrz_lines: specimen.mrzLines,
                                 identity: identity, augmentation: applied, chip: chipTruth))
                .write(to: URL(fileURLWithPath: out + "/" + name + ".json"))
            if count > 1 && (i + 1) % 50 == 0 { CLI.stderr("specimen: \(i + 1)/\(count)") }
        }
        CLI.stderr("specimen: wrote \(count) document(s) to \(out)")
        return 0
    }
}
