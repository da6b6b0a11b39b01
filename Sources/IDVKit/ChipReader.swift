import Foundation
import IDVCore

/// The raw elementary files of an eMRTD chip (ICAO 9303-10 LDS1), exactly as read: EF.SOD is required,
/// EF.COM and the data groups (1…16) are what the reader could read. The server verifies them
/// (passive authentication, ICAO 9303-11 §5.1); the SDK only carries them.
public struct CapturedChip: Sendable, Equatable {
    public var sod: Data
    public var com: Data?
    public var dataGroups: [Int: Data]
    public init(sod: Data, com: Data? = nil, dataGroups: [Int: Data] = [:]) {
        self.sod = sod; self.com = com; self.dataGroups = dataGroups
    }
}

extension CapturedChip {
    /// The files as the document step's `chip` payload (base64).
    public var payload: ChipFilesPayload { ChipFilesPayload(sod: sod, com: com, dataGroups: dataGroups) }
}

/// Reads the document's chip after the page capture, when the document has one. On a phone: the app's NFC
/// stack (ISO 14443 / ISO 7816 with BAC or PACE, keyed from the MRZ); on Linux: files. Returns nil when
/// there is no chip to read (the document step then goes on with the page images alone).
public protocol ChipReaderProvider: Sendable {
    func readChip(workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedChip?
}

/// Linux/desktop chip reading: the EF files of one chip in a folder. Accepts the names `idvd specimen --chip`
/// writes (`EF_SOD.bin`, `EF_COM.bin`, `DG1.bin` …), JMRTD's by file identifier (`ef011D.bin`, `ef011E.bin`,
/// `ef0101.bin` …) and `Datagroup1.bin` … . A folder without an EF.SOD is an error, not "no chip".
public struct FileChipReader: ChipReaderProvider {
    public let folder: URL
    /// Largest EF accepted (DG2 portraits are tens of KiB; DG3 fingerprints can reach a few hundred).
    public static let maxFileBytes = 4 * 1024 * 1024

    public init(folder: URL) { self.folder = folder }

    public func readChip(workflow: RDNAIDVWorkflow) throws(CaptureError) -> CapturedChip? {
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
