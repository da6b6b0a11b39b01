import Foundation

/// EF.SOD (ICAO 9303-10 §4.6.2): a CMS SignedData whose encapsulated content is the LDS security object —
/// the hash of every data group on the chip — signed by the document signer (DSC), whose certificate is
/// normally embedded.
///
/// ```
/// LDSSecurityObject ::= SEQUENCE {
///   version LDSSecurityObjectVersion,           -- v0, or v1 with ldsVersionInfo
///   hashAlgorithm DigestAlgorithmIdentifier,
///   dataGroupHashValues SEQUENCE SIZE (2..ub-DataGroups) OF DataGroupHash,
///   ldsVersionInfo LDSVersionInfo OPTIONAL }
/// DataGroupHash ::= SEQUENCE { dataGroupNumber INTEGER (1..16), dataGroupHashValue OCTET STRING }
/// ```
public struct SecurityObject: Sendable {
    /// id-icao-mrtd-security-ldsSecurityObject (ICAO 9303-10 §4.6.2.3).
    public static let contentType = "2.23.136.1.1.1"

    public let signedData: SignedData
    public let version: Int
    public let hashAlgorithm: DigestAlgorithm
    /// Data group number → hash, as signed.
    public let dataGroupHashes: [Int: [UInt8]]
    /// From ldsVersionInfo (v1 only), e.g. "0108" / "040000".
    public let ldsVersion: String?
    public let unicodeVersion: String?

    /// Parses EF.SOD bytes (tag 77 around the CMS ContentInfo; BER or DER inside).
    public init(_ bytes: [UInt8]) throws {
        let f = LDSFile.sod
        let root = try readFile(bytes, as: f)
        let cms: SignedData
        do { cms = try SignedData(root.valueBytes) } catch let e as CryptoError { throw LDSError.crypto(f, e) }
        guard cms.contentType == Self.contentType else {
            throw LDSError.invalid(f, "encapsulated content type \(cms.contentType.isEmpty ? "absent" : cms.contentType) is not the LDS security object (\(Self.contentType))")
        }
        guard !cms.content.isEmpty else { throw LDSError.missing(f, "LDS security object content") }
        signedData = cms
        let lso = try wrap(f) { try BERReader.single(cms.content).expect(.sequence) }
        let parts = try wrap(f) { try lso.children() }
        guard parts.count >= 3 else { throw LDSError.invalid(f, "LDS security object has \(parts.count) of at least 3 elements") }
        version = try wrap(f) { try parts[0].expect(.integer).intValue() }
        let algOID = try wrap(f) { try parts[1].expect(.sequence).children().first?.oidValue() }
        guard let algOID else { throw LDSError.missing(f, "hash algorithm") }
        guard let alg = DigestAlgorithm(oid: algOID) else { throw LDSError.unsupported(f, "hash algorithm \(algOID)") }
        hashAlgorithm = alg
        var hashes: [Int: [UInt8]] = [:]
        for h in try wrap(f, { try parts[2].expect(.sequence).children() }) {
            let pair = try wrap(f) { try h.expect(.sequence).children() }
            guard pair.count == 2 else { throw LDSError.invalid(f, "DataGroupHash with \(pair.count) elements") }
            let n = try wrap(f) { try pair[0].expect(.integer).intValue() }
            guard (1...16).contains(n) else { throw LDSError.invalid(f, "data group number \(n)") }
            guard hashes[n] == nil else { throw LDSError.invalid(f, "DG\(n) hashed twice") }
            let v = try wrap(f) { try pair[1].expect(.octetString).valueBytes }
            hashes[n] = v
        }
        dataGroupHashes = hashes
        if parts.count >= 4, let info = try? parts[3].children(), info.count == 2 {
            ldsVersion = text(info[0]); unicodeVersion = text(info[1])
        } else {
            ldsVersion = nil; unicodeVersion = nil
        }
    }

    /// Encodes an LDS security object v0 (for specimen chips): the hashes of `dataGroups` with `algorithm`.
    public static func encodeContent(dataGroups: [Int: [UInt8]], algorithm: DigestAlgorithm) -> [UInt8] {
        let hashes = dataGroups.keys.sorted().map { n in
            DER.sequence([DER.integer(n), DER.octetString(algorithm.digest(dataGroups[n]!))])
        }
        return DER.sequence([DER.integer(0), DER.sequence([DER.oid(algorithm.oid), DER.null()]), DER.sequence(hashes)])
    }
}
