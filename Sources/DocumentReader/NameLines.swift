import Foundation

// Which text lines of a visual zone to recognise first, chosen before any recognition from the
// layout's line boxes (Tesseract's layout analysis, `ct_reader_begin`) and the MRZ's names. A data
// page prints the holder's names as upper-case value lines (ICAO 9303-4 §3.2 zone II, fields 06–07;
// 9303-3 §4.6), each as long as the name: a name of n characters printed at cap height h spans about
// n · a · h, where a is the face's mean upper-case advance per cap height. Captions beside them are
// smaller and of other lengths; header lines are longer or taller. Recognising the one or two lines
// that fit the names first settles a clean page in two Tesseract line calls instead of reading the
// zone from the top (header, document type, captions…) until the names appear.

/// A text line's box in the visual-zone image, pixels (right and bottom exclusive).
struct LineBox: Sendable, Equatable {
    var left: Int, top: Int, right: Int, bottom: Int
    var width: Int { right - left }
    var height: Int { bottom - top }
}

enum NameLines {
    /// Mean upper-case advance per cap height of the faces data pages print names in, as it fits the
    /// layout's line boxes (Tesseract's box height is about the cap height of an upper-case line):
    /// chosen on the dev pages (70 rectified zones: the 24 TD3/TD2/MRV real specimens of
    /// `../shared/testdata/mrz-images` and 46 generated TD3 photos and pages, seeds 620000–620079 and
    /// 612000–612005), where 0.75 and 0.95 needed more lines read to reach both name lines than 0.85.
    static let advancePerCap = 0.85

    /// Widest misfit, as a factor either way between a line's width and the name's expected width
    /// (`fit`), for a line to be taken for that name: names printed in narrow or wide faces, with
    /// a leading field number or a trailing comma, still fit; a caption twice the length does not.
    static let maximumMisfit = 1.6

    /// Two lines of a name pair may differ in height by at most this factor (the surname and the given
    /// names are printed in one face and size, ICAO 9303-4 §3.2), start within `pairLeftOffset` of the
    /// surname line's height of each other (one left edge, field 06 above field 07), and stand at most
    /// `pairGap` of its heights apart (a caption line may stand between).
    static let pairHeightRatio = 1.3, pairLeftOffset = 1.5, pairGap = 3.5

    /// How far `line`'s width is from that of a name of `characters` characters (spaces included)
    /// printed at the line's height: |ln(width / (characters · `advancePerCap` · height))|. 0 is a
    /// perfect fit; infinity for an empty box or name.
    static func fit(_ line: LineBox, characters: Int) -> Double {
        guard line.height > 0, line.width > 0, characters > 0 else { return .infinity }
        return abs(log(Double(line.width) / (Double(characters) * advancePerCap * Double(line.height))))
    }

    /// The order to recognise `lines` (sorted top to bottom) in. `names`: each name field's printed
    /// length in characters, spaces included, the surname first. With two names, the pair of lines
    /// laid out as a surname over given names (`pairHeightRatio`, `pairLeftOffset`, `pairGap`) whose
    /// widths fit the two names best (least sum of `fit`, each within `maximumMisfit`) comes first;
    /// with one name, or when no pair is laid out so, the best-fitting line for each name. Then every
    /// other line from the top, the order before this one existed. Returns indices into `lines`.
    /// On the dev pages above whose name lines the line phase read (39 generated, 4 real), both name
    /// lines were among the first 2.6 lines on average against 5.5 from the top (generated), 3.25
    /// against 6.75 (real).
    static func readingOrder(_ lines: [LineBox], names: [Int]) -> [Int] {
        let names = names.filter { $0 > 0 }
        let limit = log(maximumMisfit)
        var first: [Int] = []
        if names.count >= 2 {
            var best: (score: Double, pair: [Int])?
            for i in lines.indices {
                let a = lines[i], fa = fit(a, characters: names[0])
                guard fa <= limit else { continue }
                for j in lines.indices.dropFirst(i + 1) {
                    let b = lines[j]
                    if Double(b.top - a.bottom) > pairGap * Double(a.height) { break }
                    let fb = fit(b, characters: names[1])
                    guard fb <= limit, Double(max(a.height, b.height)) <= pairHeightRatio * Double(max(1, min(a.height, b.height))),
                          Double(abs(a.left - b.left)) <= pairLeftOffset * Double(a.height) else { continue }
                    if best == nil || fa + fb < best!.score { best = (fa + fb, [i, j]) }
                }
            }
            first = best?.pair ?? []
        }
        if first.isEmpty {
            for n in names {
                let ranked = lines.indices.filter { !first.contains($0) }.map { (index: $0, fit: fit(lines[$0], characters: n)) }
                if let b = ranked.filter({ $0.fit <= limit }).min(by: { ($0.fit, $0.index) < ($1.fit, $1.index) }) { first.append(b.index) }
            }
        }
        return first + lines.indices.filter { !first.contains($0) }
    }
}
