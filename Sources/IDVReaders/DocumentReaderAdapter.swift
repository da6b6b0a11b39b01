import DocumentReader
import Foundation
import Synchronization
import IDVCore
import IDVEngine
import IDVRuntime
import MRZ

/// The production ``DocumentReading``: `DocumentReader.read(pages:)` (MRZ location, OCR-B
/// recognition, ICAO 9303 parsing and check digits, expiry, portrait via FaceKit, page images):
/// the reader's typed checks and findings as they are (IDVEvidence), its fields in the engine's form.
///
/// Errors: no page usable and one over the decoder's pixel limit (`Raster.maxPixels`, FaceKit
/// `ImageError.tooManyPixels`) → 1009 `imageTooLarge` naming the size and the limit; no page
/// decodes as JPEG/PNG → 1008 `invalidImage`; no readable MRZ on any page → 1080 `documentGlare`
/// when glare covers a band of a page (`DocumentFinding.glareHidesMRZ`), else 1031
/// `noDocumentFound` (all retryable in the flows). Everything else is in the report.
public struct DocumentReaderAdapter: DocumentReading {
    public var options: DocumentReaderOptions

    public init(options: DocumentReaderOptions = .init()) { self.options = options }

    /// Loads the OCR-B classifier's shipped parameters (`OCRBClassifier.shared`, trained offline:
    /// a few milliseconds, once per process) on a background thread and logs `document reader ready`
    /// with `load_ms`, so that a broken build shows at start rather than at the first upload. A
    /// document upload that arrives before it finishes waits on the same one-time initialisation.
    /// Tesseract's first recogniser (the visual-zone check) starts at the same time on a thread of its
    /// own (`DocumentReader.prepare`). Called by `idvd serve` when `documents.warm_up` is true.
    public static func warmUp() {
        DocumentReader.prepare()
        Thread.detachNewThread {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = OCRBClassifier.shared
            warmed.withLock { $0 = true }
            let ms = Int((DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
            Log.event("document reader ready", ["load_ms": .integer(ms)])
        }
    }

    private static let warmed = Mutex(false)

    /// True once ``warmUp()`` has loaded the OCR-B parameters (`/readyz`'s `document_reader` check).
    public static var isWarm: Bool { warmed.withLock { $0 } }

    public func read(pages: [Data]) throws -> DocumentEvidence {
        var o = options
        o.referenceDate = Date()
        let r = DocumentReader.read(pages: pages, options: o)
        guard !r.pagesJPEG.isEmpty else {
            for case let .tooManyPixels(page, w, h, limit) in r.pageFailures {
                throw IDVError(.imageTooLarge, "Page \(page + 1) is \(w)×\(h) pixels; the limit is \(limit) pixels: send a smaller photo")
            }
            throw IDVError(.invalidImage, "No page could be decoded as a JPEG/PNG image: send each page as a JPEG or PNG photo")
        }
        // The messages say what to do, in the words of the report's own sentences (DocumentWording).
        guard r.mrz.found, let mrz = r.mrz.result, mrz.format != .unknown else {
            if let glare = r.findings.first(where: { if case .glareHidesMRZ = $0 { return true }; return false }) {
                throw IDVError(.documentGlare, DocumentWording.sentence(glare))
            }
            throw IDVError(.noDocumentFound, DocumentWording.sentence(DocumentFinding.noMRZ))
        }
        return Self.evidence(of: r)
    }

    /// The engine's evidence of a report: its typed checks and findings as they are, its fields in
    /// the engine's form (empty strings and nil dates when no MRZ was read).
    public static func evidence(of r: DocumentReport) -> DocumentEvidence {
        let f = r.fields
        let mrz = r.mrz.result
        func opt(_ s: String) -> String? { s.isEmpty ? nil : s }
        return DocumentEvidence(
            fields: DocumentFields(documentType: f.documentCode, format: mrz?.format.rawValue ?? "", issuingState: f.issuingState, surname: f.surname,
                                   givenNames: f.givenNames, documentNumber: f.documentNumber, nationality: opt(f.nationality),
                                   dateOfBirth: f.birthDate, sex: opt(f.sex), dateOfExpiry: f.expiryDate, personalNumber: opt(f.optionalData)),
            checks: r.checks, findings: r.findings, mrzValid: mrz?.valid ?? false,
            mrzCheckDigitsValid: !(mrz?.checkDigits.isEmpty ?? true) && (mrz?.checkDigits.allSatisfy(\.valid) ?? false),
            portraitJPEG: r.portraitJPEG, pageImages: r.pagesJPEG, mrzLines: r.mrz.found ? (mrz?.lines ?? []) : [])
    }
}
