import Foundation

/// The trained parameters of the OCR-B classifier, as shipped in `Resources/ocrb-lda.bin` and written
/// by `idvd ocrb train` (`OCRBClassifier.init(seed:linesPerPitch:)`, Cairo-rendered glyphs of the
/// Debian `fonts-ocr-b` font; `Resources/SOURCES.md` says how the shipped file was made).
///
/// File format `IDVOCRB` version 1, little-endian, about 500 KB:
///
/// | bytes | content |
/// |---|---|
/// | 8 | magic `IDVOCRB\0` |
/// | 4 × 4 | UInt32: version (1), classes k (37), features d (289), shape groups g (2) |
/// | 2 × 8 | Float64: the font's advance width and cap height per unit size |
/// | k·d × 8 | discriminant weights w_k (class-major) |
/// | k × 8, k × 8 | biases b_k; log class priors |
/// | d(d+1)/2 × 8 | Cholesky factor L of the pooled covariance, lower triangle row by row |
/// | k·d × 8 | whitened class means ν_k = L⁻¹μ_k (class-major) |
/// | per group | UInt32 glyph count n, UInt32 dimension m; per glyph m mean, m·m inverse covariance, 1 log-determinant (Float64) |
/// | 8 | UInt64 FNV-1a hash of every byte before it |
///
/// The discriminant subspace used by per-document adaptation is recomputed from ν at load (the
/// same Gram–Schmidt as in training), so a loaded classifier equals a trained one bit for bit.
public struct OCRBParameters: Sendable, Equatable {
    public static let magic = Array("IDVOCRB\0".utf8)
    public static let version: UInt32 = 1

    /// The OCR-B font's advance width and cap height per unit font size (Cairo's text extents of `H`).
    public var fontMetrics: (advance: Double, cap: Double)
    public var weights: [Double]
    public var biases: [Double]
    public var logPriors: [Double]
    /// n × n, row-major, zero above the diagonal.
    public var covarianceFactor: [Double]
    public var whitenedMeans: [Double]
    public var shapeModels: [GlyphShapeModel]

    public static func == (a: OCRBParameters, b: OCRBParameters) -> Bool { a.encoded() == b.encoded() }

    /// Errors reading a parameter file.
    public enum LoadError: Error, CustomStringConvertible {
        case notAParameterFile
        case unsupportedVersion(UInt32)
        case shapeMismatch(String)
        case truncated
        case corrupt
        case missingResource(String)

        public var description: String {
            switch self {
            case .notAParameterFile: return "not an OCR-B parameter file (magic IDVOCRB missing)"
            case .unsupportedVersion(let v): return "OCR-B parameter file version \(v); this build reads version \(OCRBParameters.version)"
            case .shapeMismatch(let s): return "OCR-B parameter file does not fit this build's classifier: \(s)"
            case .truncated: return "OCR-B parameter file is truncated"
            case .corrupt: return "OCR-B parameter file is corrupt (hash mismatch)"
            case .missingResource(let s): return "OCR-B parameters not found: \(s)"
            }
        }
    }

    /// The file's bytes (format in the type's documentation).
    public func encoded() -> Data {
        var out = Data()
        out.reserveCapacity(520_000)
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        func f64(_ v: Double) { withUnsafeBytes(of: v.bitPattern.littleEndian) { out.append(contentsOf: $0) } }
        func f64s(_ v: [Double]) { for x in v { f64(x) } }
        let k = OCRBClassifier.alphabet.count, d = OCRBClassifier.featureCount
        out.append(contentsOf: Self.magic)
        u32(Self.version); u32(UInt32(k)); u32(UInt32(d)); u32(UInt32(shapeModels.count))
        f64(fontMetrics.advance); f64(fontMetrics.cap)
        f64s(weights); f64s(biases); f64s(logPriors)
        for i in 0..<d { for j in 0...i { f64(covarianceFactor[i * d + j]) } }
        f64s(whitenedMeans)
        for m in shapeModels {
            u32(UInt32(m.means.count)); u32(UInt32(m.group.dimension))
            for g in m.means.indices { f64s(m.means[g]); f64s(m.inverses[g]); f64(m.logDets[g]) }
        }
        let hash = Self.fnv1a([UInt8](out))
        withUnsafeBytes(of: hash.littleEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// Reads a parameter file; throws `LoadError` for anything that is not a complete version-1 file
    /// for this build's alphabet, feature count and shape groups.
    public init(decoding data: Data) throws {
        let k = OCRBClassifier.alphabet.count, d = OCRBClassifier.featureCount
        let groups = GlyphShapeModel.Group.allCases
        guard data.count >= Self.magic.count + 8, Array(data.prefix(Self.magic.count)) == Self.magic else { throw LoadError.notAParameterFile }
        var at = Self.magic.count
        let bytes = [UInt8](data)
        func take(_ n: Int) throws -> ArraySlice<UInt8> {
            guard at + n <= bytes.count - 8 else { throw LoadError.truncated }
            defer { at += n }
            return bytes[at..<(at + n)]
        }
        func u32() throws -> UInt32 {
            try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
        func f64s(_ n: Int) throws -> [Double] {
            let raw = try take(8 * n)
            return [Double](unsafeUninitializedCapacity: n) { buf, count in
                raw.withUnsafeBytes { src in
                    for i in 0..<n { buf[i] = Double(bitPattern: UInt64(littleEndian: src.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self))) }
                }
                count = n
            }
        }
        let version = try u32()
        guard version == Self.version else { throw LoadError.unsupportedVersion(version) }
        let (fk, fd, fg) = (Int(try u32()), Int(try u32()), Int(try u32()))
        guard fk == k, fd == d, fg == groups.count else {
            throw LoadError.shapeMismatch("\(fk) classes × \(fd) features, \(fg) shape groups; expected \(k) × \(d), \(groups.count)")
        }
        let metrics = try f64s(2)
        fontMetrics = (metrics[0], metrics[1])
        weights = try f64s(k * d)
        biases = try f64s(k)
        logPriors = try f64s(k)
        let triangle = try f64s(d * (d + 1) / 2)
        var factor = [Double](repeating: 0, count: d * d)
        var t = 0
        for i in 0..<d { for j in 0...i { factor[i * d + j] = triangle[t]; t += 1 } }
        covarianceFactor = factor
        whitenedMeans = try f64s(k * d)
        var models: [GlyphShapeModel] = []
        for group in groups {
            let (n, m) = (Int(try u32()), Int(try u32()))
            guard n == group.glyphs.count, m == group.dimension else {
                throw LoadError.shapeMismatch("shape group \(group) has \(n) glyphs × \(m) figures; expected \(group.glyphs.count) × \(group.dimension)")
            }
            var means: [[Double]] = [], inverses: [[Double]] = [], logDets: [Double] = []
            for _ in 0..<n { means.append(try f64s(m)); inverses.append(try f64s(m * m)); logDets.append(try f64s(1)[0]) }
            models.append(GlyphShapeModel(group: group, means: means, inverses: inverses, logDets: logDets))
        }
        shapeModels = models
        guard at == bytes.count - 8 else { throw LoadError.shapeMismatch("\(bytes.count - 8 - at) bytes left over") }
        let stored = bytes[at...].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard stored == Self.fnv1a(bytes[..<at]) else { throw LoadError.corrupt }
        guard fontMetrics == OCRBClassifier.fontMetrics else {
            throw LoadError.shapeMismatch("font metrics \(fontMetrics) differ from this build's OCR-B metrics \(OCRBClassifier.fontMetrics)")
        }
    }

    init(fontMetrics: (advance: Double, cap: Double), weights: [Double], biases: [Double], logPriors: [Double],
         covarianceFactor: [Double], whitenedMeans: [Double], shapeModels: [GlyphShapeModel]) {
        self.fontMetrics = fontMetrics; self.weights = weights; self.biases = biases; self.logPriors = logPriors
        self.covarianceFactor = covarianceFactor; self.whitenedMeans = whitenedMeans; self.shapeModels = shapeModels
    }

    /// 64-bit FNV-1a.
    static func fnv1a<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }

    /// The parameters shipped with this build (`Resources/ocrb-lda.bin`), or the file named by the
    /// environment variable `IDV_OCRB_PARAMETERS` when it is set (a retrained classifier).
    public static func shipped() throws -> OCRBParameters {
        if let path = ProcessInfo.processInfo.environment["IDV_OCRB_PARAMETERS"], !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path) else { throw LoadError.missingResource("IDV_OCRB_PARAMETERS=\(path) cannot be read") }
            return try OCRBParameters(decoding: data)
        }
        guard let url = Bundle.module.url(forResource: "ocrb-lda", withExtension: "bin"), let data = try? Data(contentsOf: url) else {
            throw LoadError.missingResource("ocrb-lda.bin is not in the DocumentReader resource bundle")
        }
        return try OCRBParameters(decoding: data)
    }
}
