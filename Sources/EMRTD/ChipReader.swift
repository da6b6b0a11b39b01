import CEMRTD
import Foundation
import MRZ
/// The raw elementary files read from a chip (by NFC on a phone, from files on Linux). Only EF.SOD is required.
public struct ChipFiles: Sendable, Equatable {
    public var sod: [UInt8]
    public var com: [UInt8]?
    /// Data group number (1…16) → the EF's bytes, exactly as read.
    public var dataGroups: [Int: [UInt8]]

    public init(sod: [UInt8], com: [UInt8]? = nil, dataGroups: [Int: [UInt8]] = [:]) {
        self.sod = sod; self.com = com; self.dataGroups = dataGroups
    }

    /// Largest EF accepted (DG2/DG3 with several images stay well below); larger input is refused unread.
    public static let fileLimit = 4 << 20
    /// Largest trust file accepted (the ICAO PKD LDIF exports are tens of MiB).
    public static let trustFileLimit = 256 << 20

    /// Reads the EF files of one chip from a directory. Names accepted: `EF_SOD.bin`, `EF_COM.bin`, `DG<n>.bin`
    /// (as `idvd specimen --chip` writes them), JMRTD's file identifiers (`ef011D.bin`, `ef011E.bin`, `ef0101.bin` …)
    /// and `Datagroup<n>.bin`; case does not matter. EF.SOD is required.
    public static func read(directory: String) throws -> ChipFiles {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw ChipInputError.unreadable(directory, "not a readable directory")
        }
        var sod: [UInt8]?, com: [UInt8]?
        var groups: [Int: [UInt8]] = [:]
        for name in names.sorted() {
            let lower = name.lowercased()
            guard lower.hasSuffix(".bin") else { continue }
            let stem = String(lower.dropLast(4))
            let path = directory + "/" + name
            var n: Int?
            if stem.hasPrefix("datagroup") { n = Int(stem.dropFirst(9)) }
            else if stem.hasPrefix("dg") { n = Int(stem.dropFirst(2)) }
            else if stem.hasPrefix("ef01"), stem.count == 6 { n = Int(stem.dropFirst(4), radix: 16) }
            if stem == "ef_sod" || stem == "ef011d" || stem == "sod" { sod = try readFile(path) }
            else if stem == "ef_com" || stem == "ef011e" || stem == "com" { com = try readFile(path) }
            else if let n, (1...16).contains(n) { groups[n] = try readFile(path) }
        }
        guard let sod else { throw ChipInputError.unreadable(directory, "no EF_SOD.bin (or ef011D.bin)") }
        return ChipFiles(sod: sod, com: com, dataGroups: groups)
    }

    /// Reads a file, refusing one larger than `limit` before reading it.
    public static func readFile(_ path: String, limit: Int = fileLimit) throws -> [UInt8] {
        let attrs: [FileAttributeKey: Any]
        do { attrs = try FileManager.default.attributesOfItem(atPath: path) } catch { throw ChipInputError.unreadable(path, "no such file") }
        let size = (attrs[.size] as? NSNumber)?.intValue ?? 0
        guard size <= limit else { throw ChipInputError.tooLarge(path, size, limit) }
        guard let d = FileManager.default.contents(atPath: path) else { throw ChipInputError.unreadable(path, "cannot be read") }
        return [UInt8](d)
    }
}

/// Why chip input could not be used at all.
public enum ChipInputError: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(String, String)
    case tooLarge(String, Int, Int)
    public var description: String {
        switch self {
        case let .unreadable(p, why): return "\(p): \(why)"
        case let .tooLarge(p, n, l): return "\(p): \(n) bytes exceed the limit of \(l)"
        }
    }
}

/// DG1's MRZ against the MRZ printed on the data page (ICAO 9303-11 §5.1: the chip is authentic, so any
/// difference means the page or the chip is not the document's).
public struct MRZCrossCheck: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable { case matches, differs }
    public var outcome: Outcome
    /// Names of the MRZ fields that differ ("document_number", "birth_date", …; "lines" when the layouts differ).
    public var differingFields: [String]

    /// Compares MRZ lines (whitespace and case ignored).
    public static func compare(chip: [String], printed: [String]) -> MRZCrossCheck {
        func norm(_ l: [String]) -> [String] { l.map { $0.uppercased().filter { !$0.isWhitespace } } }
        let a = norm(chip), b = norm(printed)
        if a == b { return MRZCrossCheck(outcome: .matches, differingFields: []) }
        guard a.count == b.count, zip(a, b).allSatisfy({ $0.count == $1.count }) else {
            return MRZCrossCheck(outcome: .differs, differingFields: ["lines"])
        }
        // Field columns by layout (ICAO 9303-4 §4.2.2 TD3, 9303-5 §4.2.2 TD1, 9303-6 §4.2.2 TD2).
        typealias Field = (String, Int, Range<Int>)
        let td3: [Field] = [("document_code", 0, 0..<2), ("issuing_state", 0, 2..<5), ("name", 0, 5..<44), ("document_number", 1, 0..<9),
                            ("nationality", 1, 10..<13), ("birth_date", 1, 13..<19), ("sex", 1, 20..<21), ("expiry_date", 1, 21..<27),
                            ("optional_data", 1, 28..<42)]
        let td2: [Field] = [("document_code", 0, 0..<2), ("issuing_state", 0, 2..<5), ("name", 0, 5..<36), ("document_number", 1, 0..<9),
                            ("nationality", 1, 10..<13), ("birth_date", 1, 13..<19), ("sex", 1, 20..<21), ("expiry_date", 1, 21..<27),
                            ("optional_data", 1, 28..<35)]
        let td1: [Field] = [("document_code", 0, 0..<2), ("issuing_state", 0, 2..<5), ("document_number", 0, 5..<14),
                            ("optional_data", 0, 15..<30), ("birth_date", 1, 0..<6), ("sex", 1, 7..<8), ("expiry_date", 1, 8..<14),
                            ("nationality", 1, 15..<18), ("optional_data", 1, 18..<29), ("name", 2, 0..<30)]
        let layout = a.count == 3 ? td1 : a[0].count == 44 ? td3 : td2
        let x = a.map(Array.init), y = b.map(Array.init)
        var d: [String] = []
        var covered = Set<[Int]>()
        for (name, line, cols) in layout {
            for c in cols { covered.insert([line, c]) }
            if x[line][cols] != y[line][cols], !d.contains(name) { d.append(name) }
        }
        for l in 0..<x.count { for c in 0..<x[l].count where !covered.contains([l, c]) && x[l][c] != y[l][c] {
            if !d.contains("check_digits") { d.append("check_digits") }
        } }
        return MRZCrossCheck(outcome: .differs, differingFields: d)
    }
}

/// DG1's issuing state and the X.509 countryName values its certificates carry (ICAO 9303-3 §5 code →
/// ISO 3166-1 alpha-2, `MRZ.CountryCodes.x509CountryNames`): what the signer certificates' countries
/// (`PassiveAuthenticationEvidence.signerCountries`) are compared with. Evidence, no verdict.
public struct IssuingStateEvidence: Codable, Sendable, Equatable {
    /// DG1's issuing state, fillers removed (`NLD`, `D`, `UTO`); TD1, TD2 and TD3 all hold it in line 1, columns 3–5.
    public var code: String
    /// The countryName values (upper case) the issuing state's CSCA and document signers carry; empty when the code
    /// has none known (an ICAO Part D organisation, an unknown code).
    public var x509CountryNames: [String]

    /// The issuing state of DG1 `lines`; nil when line 1 is shorter than 5 characters.
    public init?(dg1 lines: [String]) {
        guard let first = lines.first, first.count >= 5 else { return nil }
        var s = Substring(String(Array(first)[2..<5]))
        while s.last == "<" { s = s.dropLast() }
        code = String(s)
        x509CountryNames = CountryCodes.x509CountryNames(ofIssuingState: code)
    }
}

/// Everything read from one chip: the parsed files, the passive-authentication evidence and, when the printed
/// MRZ is given, the DG1 cross-check. Evidence, not a verdict.
public struct ChipReport: Sendable {
    public var com: EFCOM?
    public var dg1: DG1?
    public var dg2: DG2?
    public var dg11: DG11?
    public var dg12: DG12?
    public var dg14: DG14?
    public var dg15: DG15?
    /// Files that were presented but could not be parsed (their hashes are still checked).
    public var parseErrors: [LDSError]
    public var securityObject: SecurityObject
    public var passiveAuthentication: PassiveAuthenticationEvidence
    public var mrzCrossCheck: MRZCrossCheck?
    /// DG1's issuing state and its certificates' country (nil without a parsed DG1).
    public var issuingState: IssuingStateEvidence?

    /// The first face image of DG2, if any.
    public var portrait: DG2.Face? { dg2?.faces.first }
}

/// Reads a chip's files and runs passive authentication against the operator's trust.
public struct ChipReader: Sendable {
    public let trust: CSCATrust
    public init(trust: CSCATrust) { self.trust = trust }

    /// Parses and verifies. Throws `LDSError` only when EF.SOD itself is unusable (nothing can be authenticated
    /// without it); a data group that fails to parse is reported in `parseErrors`.
    /// - Parameters:
    ///   - now: the time validity and CRL freshness are checked at.
    ///   - printedMRZ: the MRZ lines read from the data page, for the DG1 cross-check.
    public func read(_ files: ChipFiles, at now: Date = Date(), printedMRZ: [String]? = nil) throws -> ChipReport {
        let sod = try SecurityObject(files.sod)
        var errors: [LDSError] = []
        func parse<T>(_ n: Int, _ make: ([UInt8]) throws -> T) -> T? {
            guard let b = files.dataGroups[n] else { return nil }
            do { return try make(b) } catch let e as LDSError { errors.append(e); return nil } catch { return nil }
        }
        var com: EFCOM?
        if let c = files.com { do { com = try EFCOM(c) } catch let e as LDSError { errors.append(e) } }
        let dg1 = parse(1, DG1.init)
        let report = ChipReport(
            com: com, dg1: dg1, dg2: parse(2, DG2.init), dg11: parse(11, DG11.init), dg12: parse(12, DG12.init),
            dg14: parse(14, DG14.init), dg15: parse(15, DG15.init), parseErrors: errors, securityObject: sod,
            passiveAuthentication: PassiveAuthentication.verify(sod, dataGroups: files.dataGroups, trust: trust, at: now),
            mrzCrossCheck: printedMRZ.flatMap { p in dg1.map { MRZCrossCheck.compare(chip: $0.lines, printed: p) } },
            issuingState: dg1.flatMap { IssuingStateEvidence(dg1: $0.lines) })
        return report
    }
}

/// 8-bit pixels decoded from a chip portrait: row-major, interleaved, `channels` 1 (grey) or 3 (RGB).
public struct PortraitPixels: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var channels: Int
    public var pixels: [UInt8]
    public init(width: Int, height: Int, channels: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * channels, "PortraitPixels: size mismatch")
        self.width = width; self.height = height; self.channels = channels; self.pixels = pixels
    }
}

/// JPEG 2000 (ISO/IEC 15444-1) through OpenJPEG: the usual encoding of DG2 portraits.
public enum JPEG2000 {
    /// Decoding limit when the caller gives none: 16 megapixels (a DG2 portrait is about 0.25).
    public static let defaultMaxPixels = 16_000_000

    /// Decodes a JP2 file or J2K codestream. Refuses declared sizes above `maxPixels` before decoding.
    public static func decode(_ bytes: [UInt8], maxPixels: Int = defaultMaxPixels) throws -> PortraitPixels {
        var bm = em_bitmap()
        var w: Int64 = 0, h: Int64 = 0
        try shim { em_jpeg2000_decode(bytes, bytes.count, UInt64(maxPixels), &bm, &w, &h, $0, $1) }
        defer { em_free(bm.pixels) }
        let n = Int(bm.width) * Int(bm.height) * Int(bm.channels)
        return PortraitPixels(width: Int(bm.width), height: Int(bm.height), channels: Int(bm.channels),
                              pixels: Array(UnsafeBufferPointer(start: bm.pixels, count: n)))
    }

    /// Encodes grey or RGB pixels as a JP2 file, lossy at about `ratio`:1.
    public static func encode(_ image: PortraitPixels, ratio: Float = 20) throws -> [UInt8] {
        var out = em_bytes()
        try shim { em_jpeg2000_encode(image.pixels, Int32(image.width), Int32(image.height), Int32(image.channels), ratio, &out, $0, $1) }
        return takeBytes(out)
    }
}

/// Versions of the libraries behind the chip reader.
public enum EMRTDLibraries {
    public static var openSSL: String { String(cString: em_openssl_version()) }
    public static var openJPEG: String { String(cString: em_openjpeg_version()) }
}

extension ChipReport: Encodable {
    private enum Keys: String, CodingKey {
        case passiveAuthentication, mrzCrossCheck, issuingState, securityObject, com, dg1, dg2, dg11, dg12, dg14, dg15, parseErrors
    }
    private struct SecurityObjectView: Encodable {
        let version: Int; let hashAlgorithm: DigestAlgorithm; let dataGroups: [Int]; let ldsVersion: String?; let unicodeVersion: String?
        let embeddedCertificates: Int; let signers: Int
    }
    private struct DG1View: Encodable { let lines: [String]; let format: MRZFormat; let checkDigitsValid: Bool }
    private struct FaceView: Encodable {
        let imageDataType: DG2.Face.ImageDataType; let width: Int; let height: Int; let imageBytes: Int
        let faceImageType: Int; let gender: Int; let colourSpace: Int; let sourceType: Int; let quality: Int
    }
    private struct DG2View: Encodable { let faces: [FaceView] }
    private struct ParseErrorView: Encodable { let file: LDSFile; let error: String }

    /// JSON shape of `idvd chip verify` (keys camelCase here; the CLI writes them snake_case).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(passiveAuthentication, forKey: .passiveAuthentication)
        try c.encodeIfPresent(mrzCrossCheck, forKey: .mrzCrossCheck)
        try c.encodeIfPresent(issuingState, forKey: .issuingState)
        let so = securityObject
        try c.encode(SecurityObjectView(version: so.version, hashAlgorithm: so.hashAlgorithm, dataGroups: so.dataGroupHashes.keys.sorted(),
                                        ldsVersion: so.ldsVersion, unicodeVersion: so.unicodeVersion,
                                        embeddedCertificates: so.signedData.certificates.count, signers: so.signedData.signerCount),
                     forKey: .securityObject)
        try c.encodeIfPresent(com, forKey: .com)
        try c.encodeIfPresent(dg1.map { DG1View(lines: $0.lines, format: $0.mrz.format, checkDigitsValid: $0.mrz.checkDigits.allSatisfy(\.valid)) }, forKey: .dg1)
        try c.encodeIfPresent(dg2.map { DG2View(faces: $0.faces.map {
            FaceView(imageDataType: $0.imageDataType, width: $0.width, height: $0.height, imageBytes: $0.imageData.count,
                     faceImageType: $0.faceImageType, gender: $0.gender, colourSpace: $0.colourSpace, sourceType: $0.sourceType, quality: $0.quality)
        }) }, forKey: .dg2)
        try c.encodeIfPresent(dg11, forKey: .dg11)
        try c.encodeIfPresent(dg12, forKey: .dg12)
        try c.encodeIfPresent(dg14, forKey: .dg14)
        try c.encodeIfPresent(dg15, forKey: .dg15)
        try c.encode(parseErrors.map { ParseErrorView(file: $0.file, error: $0.description) }, forKey: .parseErrors)
    }
}
