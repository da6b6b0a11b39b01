import Foundation
import IDVEvidence
import MRZ

// Stage 4 of `DocumentReader.read`: the MRZ's names, which have no check digit, against the printed
// visual zone (TD3, TD2, MRV: `visualZoneCheck`) or the TD1 card's front and the text above its MRZ
// (`cardCheck`). A part printed the same confirms the doubtful name letters inside it; a part the
// reader settled in the visual zone's favour puts the printed name into the report's fields.

extension DocumentReading {
    /// Stage 4: the "Names match visual zone" check, and the doubtful name letters (`doubtfulNames`)
    /// the visual zone did not confirm as one finding at the place stage 1 left for it.
    mutating func checkNames() {
        if !options.checkVisualZone {
            check(.namesMatchVisualZone, .notPerformed, .none)
        } else if let best, let result = section.result, result.format != .unknown {
            compareNames(best.reading, best.page, best.image, result)
        } else {
            check(.namesMatchVisualZone, .notPerformed, .visualZone(.noVisualZone))
        }
        if !doubtfulNames.isEmpty {
            findings.insert(.uncertainName(cells: Array(doubtfulNames.prefix(3)), total: doubtfulNames.count), at: min(doubtfulNamesAt, findings.count))
        }
        lap(\.visualZone)
    }

    /// Reads the printed names (TD1: on the card's other page and above the MRZ, `cardCheck`; else the
    /// visual zone of the MRZ's page, `visualZoneCheck`) and compares each MRZ name part with them.
    private mutating func compareNames(_ reading: MRZReading, _ page: Int, _ image: DocumentImage, _ result: MRZResult) {
        let search: VisualZoneSearch
        if let frame = MRZDocumentFrame(reading: reading), frame.mrzOnBack {
            search = DocumentReader.cardCheck(pages: images.indices.map { (indices[$0], images[$0].grey) }, mrzPage: page,
                                              reading: reading, result: result, frame: frame, quarterTurns: quarterTurns)
        } else {
            search = DocumentReader.visualZoneCheck(page: image.grey, reading: reading, result: result, nameLinesFirst: options.nameLinesFirst)
        }
        var confirmed: [MRZNamePart] = []
        var outcome = CheckResult.notPerformed
        let comparedParts: [VisualZoneNamePart]?
        switch search {
        case let .compared(p), let .comparedOnCard(_, p): comparedParts = p
        default: comparedParts = nil
        }
        if let compared = comparedParts {
            let parts = VisualZoneNames.parts(result.lines, format: result.format)
            for c in compared {
                switch c.outcome {
                case .agrees, .settled:
                    if outcome == .notPerformed { outcome = .passed }
                    confirmed += parts.filter { $0.field == c.field && $0.text == c.mrz }
                    if c.outcome == .settled, c.winner == .visualZone, let printed = c.visualZone {
                        // The settled name is the printed one: the report's field carries it.
                        func replaced(_ s: String) -> String {
                            var words = s.split(separator: " ").map(String.init)
                            if let i = words.firstIndex(of: c.mrz) { words[i] = printed }
                            return words.joined(separator: " ")
                        }
                        if c.field == .primaryIdentifier { fields.surname = replaced(fields.surname) } else { fields.givenNames = replaced(fields.givenNames) }
                    }
                case .differs:
                    outcome = .failed
                    findings.append(.nameDiffersFromVisualZone(field: c.field, mrz: c.mrz, visualZone: c.visualZone ?? ""))
                case .notFound: break
                }
            }
        }
        check(.namesMatchVisualZone, outcome == .passed && confirmed.isEmpty ? .notPerformed : outcome, .visualZone(search))
        // A doubtful name letter inside a part the visual zone printed the same (or settled) is confirmed.
        doubtfulNames = doubtfulNames.filter { d in
            !confirmed.contains { $0.line == d.line - 1 && d.column - 1 >= $0.column && d.column - 1 < $0.column + $0.text.count }
        }
    }
}
