import Foundation
import MRZ

// The hand-over from the recogniser to the parser (stage 1 of `DocumentReader.read`): the reading's
// per-cell candidates with posteriors in the parser's shape, and the reading as printed when the
// position's class forced a character the classifier gave (next to) nothing.

extension MRZReading {
    /// Per-cell candidates with posteriors in the shape `MRZParser.parse(_:posteriors:)` takes: the
    /// read character with `confidences[l][c]`, then `alternatives[l][c]` with their posteriors
    /// from `posteriors[l][c]` (0 for a look-alike the classifier gave nothing). Issuing-state and
    /// nationality cells (no check digit; the parser chooses among ICAO codes by posterior) list every
    /// symbol with posterior ≥ `codeCandidateFloor` instead, most probable first, at most 15.
    public var parserCandidates: [[[MRZCandidate]]] {
        let classes = MRZCharacterClass.layout(lineLength: lines.first?.count ?? 0, lineCount: lines.count)
        return lines.enumerated().map { l, line in
            Array(line).enumerated().map { c, ch in
                var out = [MRZCandidate(ch, l < confidences.count && c < confidences[l].count ? confidences[l][c] : 0)]
                let post = l < posteriors.count && c < posteriors[l].count ? posteriors[l][c] : [:]
                if l < classes.count, c < classes[l].count, classes[l][c] == .code, !post.isEmpty {
                    let ranked = post.filter { $0.key != ch && $0.value >= Self.codeCandidateFloor }.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
                    return out + ranked.prefix(15).map { MRZCandidate($0.key, $0.value) }
                }
                if l < alternatives.count, c < alternatives[l].count {
                    for a in alternatives[l][c] where a != ch { out.append(MRZCandidate(a, post[a] ?? 0)) }
                }
                return out
            }
        }
    }

    /// Least posterior of a code-cell candidate handed to the parser: below it the classifier's tail
    /// carries no usable evidence (the parser spreads the unlisted rest evenly).
    public static let codeCandidateFloor = 1e-4

    /// Least posterior, relative to the classifier's top symbol, of a character the position's class
    /// chose over it (`MRZCharacterClass.choose`: a digit for a letter in a date or check digit, a
    /// letter for a digit in a name) for the choice to stand in a reading that finds no valid
    /// parse. Measured on the final readings of the c1000 corpus (35 class-forced cells, `O`→`0` in
    /// dates, `0`→`O` in codes and names, `T`→`1`, every one printed as forced): the least had 1.4 · 10⁻³
    /// of the top's posterior; on the real specimens id_fail's printed `A` in the expiry check digit
    /// gives the forced `4` 1.3 · 10⁻¹². 10⁻⁸ lies five orders of magnitude below the first and four
    /// above the second.
    public static let forcedChoiceFloor = 1e-8

    /// The reading with every cell whose class-forced character had less than `forcedChoiceFloor` of
    /// the classifier's top symbol's posterior set back to that symbol (its confidence the top's
    /// posterior, the forced character first among its alternatives); nil when there is none or the
    /// reading has no posteriors.
    public var asPrinted: MRZReading? {
        guard !posteriors.isEmpty else { return nil }
        let classes = MRZCharacterClass.layout(lineLength: lines.first?.count ?? 0, lineCount: lines.count)
        // Whether the class rules the symbol out (and so forced another): other position rules (name
        // padding, a lone K between fillers) are not undone.
        func forbids(_ cls: MRZCharacterClass, _ ch: Character) -> Bool {
            switch cls {
            case .numeric: return ch.isLetter
            case .name: return ch.isNumber
            case .code: return ch == "0"
            case let .documentCode(allowed): return !allowed.contains(ch)
            case .any: return false
            }
        }
        var out = self, changed = false
        for l in lines.indices where l < posteriors.count && l < classes.count {
            var chars = Array(lines[l])
            for c in chars.indices where c < posteriors[l].count && c < classes[l].count {
                guard let top = posteriors[l][c].max(by: { ($0.value, $1.key) < ($1.value, $0.key) }), top.key != chars[c],
                      forbids(classes[l][c], top.key) else { continue }
                let forced = posteriors[l][c][chars[c]] ?? 0
                guard forced < Self.forcedChoiceFloor * top.value else { continue }
                if l < out.alternatives.count, c < out.alternatives[l].count {
                    out.alternatives[l][c] = [chars[c]] + out.alternatives[l][c].filter { $0 != chars[c] && $0 != top.key }
                }
                if l < out.confidences.count, c < out.confidences[l].count { out.confidences[l][c] = top.value }
                chars[c] = top.key
                changed = true
            }
            out.lines[l] = String(chars)
        }
        return changed ? out : nil
    }

    /// The reading handed to the parser and its parse. The reading as recognised, unless it parses
    /// invalid and some cell's class forced a character the classifier gave (next to) nothing
    /// (`asPrinted`): then no valid reading exists either way, and the report shows what is printed
    /// (id_fail.png, a card printed without its expiry check digit: `…111231AUT…`, not `…1112314UT…`).
    public func handOver(to parser: MRZParser = MRZParser()) -> (reading: MRZReading, result: MRZResult) {
        let result = parsedAsRead(by: parser)
        guard !result.valid, let printed = asPrinted else { return (self, result) }
        return (printed, printed.parsedAsRead(by: parser))
    }

    /// The reading parsed and check-digit-corrected as `DocumentReader.read` does it: `handOver(to:)`'s
    /// result.
    public func parsed(by parser: MRZParser = MRZParser()) -> MRZResult { handOver(to: parser).result }

    /// This reading parsed and check-digit-corrected: from the posteriors (maximum a posteriori,
    /// `MRZParser.parse(_:posteriors:)`) when the reading has them, else from the ranked alternatives.
    func parsedAsRead(by parser: MRZParser) -> MRZResult {
        return posteriors.isEmpty ? parser.parse(lines, alternatives: alternatives) : parser.parse(lines, posteriors: parserCandidates)
    }
}
