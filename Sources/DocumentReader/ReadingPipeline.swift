import Foundation
import IDVEvidence
import Imaging
import MRZ

// `DocumentReader.read` is a pipeline of named stages over one `DocumentReading`, the state each
// stage hands on to the next:
//   1. the MRZ — `readMRZ` (located and recognised on every page, the most confident kept, a small
//      one re-read from the source) and `checkMRZ` (handed to the parser; readability, check digits,
//      well-formed and required fields, dates, country codes);
//   2. `checkImageQuality` — sharpness, glare and resolution of the MRZ band;
//   3. `findPortrait` — the page images turned upright and the portrait inside the MRZ's document;
//   4. `checkNames` — the names against the visual zone or the TD1 card's front;
// then `report()` assembles the `DocumentReport`. Each stage reads only what the stages before it
// left and appends its checks and findings, so the report's order is the stages' order.

extension DocumentReader {
    /// Reads one or two page images (JPEG/PNG bytes, any orientation) into a document report.
    /// Never throws for image content: undecodable pages become findings in the report (and the
    /// MRZ is then not present), so the caller always has evidence to judge.
    public static func read(pages: [Data], options: DocumentReaderOptions = .init()) -> DocumentReport {
        var findings: [DocumentFinding] = []
        var decoded: [(Int, DocumentImage)] = []
        var failures: [DocumentReport.PageFailure] = []
        let started = DispatchTime.now().uptimeNanoseconds
        for (i, data) in pages.enumerated() {
            do { decoded.append((i, try DocumentImage.decode(data, maxDimension: options.workingMaxDimension))) } catch let ImageError.tooManyPixels(w, h, limit) {
                failures.append(.tooManyPixels(page: i, width: w, height: h, limit: limit))
                findings.append(.pageTooLarge(page: i, width: w, height: h, limit: limit))
            } catch {
                failures.append(.undecodable(page: i, reason: "\(error)"))
                findings.append(.pageUndecodable(page: i, reason: "\(error)"))
            }
        }
        let decodeTime = seconds(since: started)
        var report = read(images: decoded.map(\.1), pageIndices: decoded.map(\.0), options: options, initialFindings: findings)
        report.pageFailures = failures
        report.timing.decode = decodeTime
        return report
    }
    /// Reads decoded page images into a document report: the stages above, in order.
    public static func read(images: [DocumentImage], pageIndices: [Int]? = nil, options: DocumentReaderOptions = .init(),
                            initialFindings: [DocumentFinding] = []) -> DocumentReport {
        var reading = DocumentReading(images: images, pageIndices: pageIndices, options: options, findings: initialFindings)
        reading.readMRZ()
        reading.checkMRZ()
        reading.checkImageQuality()
        reading.findPortrait()
        reading.checkNames()
        return reading.report()
    }

    static func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
}

/// One reading of a document's pages on its way through the stages of `DocumentReader.read(images:…)`:
/// the pages, the options, and what each stage found for the stages after it.
struct DocumentReading {
    /// The decoded pages, and each one's 0-based index among the pages given.
    let images: [DocumentImage]
    let indices: [Int]
    let options: DocumentReaderOptions
    /// Every check performed and every finding, in the order the stages add them.
    var checks: [CheckOutcome] = []
    var findings: [DocumentFinding]
    /// Where the time went, stage by stage (`lap`).
    var timing = DocumentReport.Timing()
    private var lapStarted = DispatchTime.now().uptimeNanoseconds

    // Stage 1 (`readMRZ`, `checkMRZ`).
    /// The MRZ the report is about: the most confident page reading (re-read from the source when
    /// that rated higher, then as handed to the parser), its page's index and the page.
    var best: (reading: MRZReading, page: Int, image: DocumentImage)?
    /// Every page's MRZ reading as first read, with the page's index.
    var everyReading: [(reading: MRZReading, page: Int)] = []
    /// The image and reading the MRZ's image quality is measured on: the page, or the band re-read
    /// from the source in the band's own pixels.
    var measured: (image: GreyImage, reading: MRZReading)?
    /// The MRZ section of the report (`found` false until stage 1 finds one).
    var section = DocumentReport.MRZSection(found: false, pageIndex: nil, linesRead: [], meanConfidence: 0, lowConfidenceCells: 0,
                                            angleDegrees: 0, capHeightPixels: 0, result: nil)
    /// The document's data from the MRZ (stage 4 may put a settled printed name in).
    var fields = MRZFields()
    /// Name letters whose rival the classifier gave real weight, and the place in `findings` their
    /// finding takes once stage 4 has confirmed those the visual zone prints the same.
    var doubtfulNames: [DocumentReport.DoubtfulCell] = []
    var doubtfulNamesAt = 0

    // Stage 3 (`findPortrait`).
    /// The page images, upright, scaled and JPEG-encoded (`DocumentReport.pagesJPEG`).
    var pagesJPEG: [Data] = []
    /// The portrait crop, JPEG; nil when none was found.
    var portrait: Data?

    init(images: [DocumentImage], pageIndices: [Int]?, options: DocumentReaderOptions, findings: [DocumentFinding]) {
        self.images = images
        self.indices = pageIndices ?? Array(images.indices)
        self.options = options
        self.findings = findings
    }

    /// Quarter turns (clockwise) of the MRZ's page from upright, by the MRZ's direction; 0 without an MRZ.
    var quarterTurns: Int { best.map { Int((($0.reading.angleDegrees / 90).rounded())) % 4 } ?? 0 }

    /// Records the outcome of check `id`.
    mutating func check(_ id: DocumentCheckID, _ result: CheckResult, _ measured: CheckMeasurement = .none) {
        checks.append(CheckOutcome(id, result, measured))
    }

    /// Adds the time since the last lap to `slot`.
    mutating func lap(_ slot: WritableKeyPath<DocumentReport.Timing, Double>) {
        let now = DispatchTime.now().uptimeNanoseconds
        timing[keyPath: slot] += Double(now - lapStarted) / 1e9
        lapStarted = now
    }

    /// The report of the stages run: the chip check is never performed by the reader (the chip is
    /// read apart from the pages and judged by the policy).
    mutating func report() -> DocumentReport {
        check(.chipVerification, .notPerformed, .chipNotSupported)
        var report = DocumentReport(mrz: section, fields: fields, portraitJPEG: portrait, pagesJPEG: pagesJPEG, checks: checks, findings: findings,
                                    referenceDate: options.referenceDate)
        report.timing = timing
        return report
    }
}
