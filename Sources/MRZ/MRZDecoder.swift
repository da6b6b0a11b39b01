import Foundation

/// One candidate reading of one MRZ cell with the recogniser's posterior probability (0…1), e.g.
/// from the OCR-B classifier's softmax. A cell's candidates need not sum to 1: the rest is the mass
/// of characters not listed (see `MRZDecoder`).
public struct MRZCandidate: Sendable, Equatable {
    public var character: Character
    public var posterior: Double
    public init(_ character: Character, _ posterior: Double) {
        self.character = character
        self.posterior = posterior
    }
}

/// Maximum-a-posteriori decoding of the check-digit-protected cells of an MRZ from per-cell posteriors.
///
/// Model: a hypothesis assigns one character to every cell some check digit covers (and to the check
/// digits). Its cost is −Σ log P(cell | image) − log prior, where the posterior comes from the
/// recogniser (confusion-table characters it did not list: `floorPosterior`) and the prior is
/// positional: Doc 9303-3 §4.3–4.4 character classes (only digits in dates and check digits) and, in
/// document-number and optional-data fields, `kindChangeLogPrior` per letter↔digit change between
/// neighbours (runs of one kind) and `letterLogPrior` per letter (letters are rarer than digits there). Admissible: every check digit, the composite included (Doc 9303-3
/// §4.9), holds. Only cells a failing field check digit covers may change (plus, when the composite
/// fails, the cells only the composite covers, and any character that cannot stand where it is); a
/// field whose own check digit holds keeps its reading. A change between characters of equal
/// check-digit value modulo 10 (K↔`<`, L↔1, G↔6, …) is never proposed: no check digit could confirm it.
///
/// The unseen rival: each open cell also has an "unlisted character" option with posterior
/// (1 − Σ listed)/10 (about one unlisted character in ten has the check-digit value needed), admissible
/// when the checks covering it agree on that value and no listed option already has it. A best
/// hypothesis that needs one is not applied.
///
/// Support: a best hypothesis that changes a cell whose character could stand where it is to a
/// character the recogniser did not list (a confusion-table character at `floorPosterior`) is not
/// applied either (`unsupported`): the posteriors, not the table, must propose a change. Forced
/// cells (a letter in a date) may still take a table character. No hypothesis that puts a filler
/// inside a document number is admissible (`Layout.introducesInnerFiller`).
///
/// Search: best-first enumeration of index vectors over each open cell's candidates sorted by cost
/// (each vector generated once, from one parent, with at most three children), at most `budget`
/// vectors. The best admissible hypothesis is applied only when no other admissible one comes within
/// `margin` (log-odds; ×10 more without a composite check digit) of it, which the best-first order
/// proves once the frontier passes that bound; otherwise nothing is applied and the MRZ is flagged.
struct MRZDecoder {
    typealias Rows = [[UInt8]]

    /// Posterior assumed for a confusion-table character the recogniser did not list.
    static let floorPosterior = 1e-4
    /// Log prior of each letter↔digit change between neighbours in a document number or optional data:
    /// an `O` between digits (two changes) is 400× less likely than a `0` there. ICAO document numbers
    /// are mostly all digits or a letter prefix then digits.
    static let kindChangeLogPrior = -log(20.0)
    /// Log prior of a letter against a digit in a document number or optional data: one given letter
    /// is 15× less likely than one given digit. Measured on the document numbers of the 33 real
    /// specimens' ground truth: 39 letters, 229 digits (14.5 % letters over 26, 85.5 % digits over
    /// 10 → ratio 0.065); the generator's 15 % letter share agrees.
    static let letterLogPrior = log((39.0 / 26) / (229.0 / 10))
    /// Least log-odds by which the best admissible hypothesis must beat every rival: 100:1. Chosen on
    /// `idvd bench mrz`'s posterior corpus (2,000 MRZs, debug run): 20:1 and 50:1 gave 1 wrong
    /// correction, 100:1 none; the real specimens were not used to choose it.
    static let margin = log(100.0)
    /// Marks a cell holding a character the recogniser did not list (never applied).
    static let unseen: UInt8 = 0
    /// Most hypotheses examined per MRZ.
    static let budget = 20_000

    enum Outcome: Equatable {
        /// The reading already satisfies every check digit (nothing to decode).
        case unchanged
        /// The decisive hypothesis: the changes and the log-odds margin over the best rival (∞ when none).
        case decided([Corrector.Change], margin: Double)
        /// Several admissible hypotheses within `margin`; `count` of them were found.
        case ambiguous(count: Int)
        /// No admissible hypothesis within the budget.
        case none
        /// The decisive hypothesis changes a cell whose character could stand where it is to a
        /// character the recogniser did not list (a confusion-table guess, `unsupported`): nothing is
        /// applied. The changes are the hypothesis's.
        case unsupported([Corrector.Change])
    }

    struct Cell {
        let line: Int, column: Int
        /// Candidates, best first: character, log score (posterior × prior), whether the recogniser listed it.
        var options: [(b: UInt8, score: Double, listed: Bool)]
    }

    let format: MRZFormat
    let classes: [[CharClass?]]
    /// `posteriors[l][c]`: candidate bytes with posteriors (the read byte included when known).
    let posteriors: [[[(b: UInt8, p: Double)]]]
    /// Whether confusion-table characters the recogniser did not list may be proposed (only where a
    /// composite check digit double-checks them).
    let tableAllowed: Bool
    /// The named national deviations in force (`MRZParser.deviations`), for layouts of hypotheses.
    var deviations: Set<MRZDeviation> = []

    /// The cells to decode: every position a check digit covers, and the check digits.
    static func cells(_ layout: Layout) -> [(Int, Int)] {
        var seen = Set<Int>(), out: [(Int, Int)] = []
        for ch in layout.checks {
            for seg in ch.segments { for c in seg.range where seen.insert(seg.line << 8 | c).inserted { out.append((seg.line, c)) } }
            if seen.insert(ch.digit.line << 8 | ch.digit.column).inserted { out.append((ch.digit.line, ch.digit.column)) }
        }
        return out
    }

    func posterior(_ l: Int, _ c: Int, _ b: UInt8) -> Double? {
        guard l < posteriors.count, c < posteriors[l].count else { return nil }
        return posteriors[l][c].first { $0.b == b }?.p
    }

    /// Letter↔digit changes between neighbouring characters of the document-number and optional-data
    /// fields (fillers break runs): the positional prior's "runs of one kind".
    static func kindChanges(_ rows: Rows, _ layout: Layout) -> Int {
        var n = 0
        for f in layout.fields where kindField(f) {
            var previous: Bool?
            for c in f.range {
                let b = rows[f.line][c]
                let digit = b >= 0x30 && b <= 0x39, letter = b >= 0x41 && b <= 0x5A
                if !digit && !letter { previous = nil; continue }
                if let p = previous, p != digit { n += 1 }
                previous = digit
            }
        }
        return n
    }

    /// The fields the positional prior covers: document number and optional data.
    static func kindField(_ f: FieldLayout) -> Bool {
        f.cls == .alnum && (f.name == "document_number" || f.name.hasPrefix("optional_data"))
    }

    /// The candidates of one cell, best first.
    func cell(_ rows: Rows, _ layout: Layout, _ l: Int, _ c: Int, unseen: Bool, open: Bool = true, table: Bool = true) -> Cell {
        let observed = rows[l][c]
        guard let cls = classes[l][c] else { return Cell(line: l, column: c, options: [(observed, 0, true)]) }
        let forced = !cls.allows(observed)
        var list: [(b: UInt8, p: Double, listed: Bool)] = []
        func add(_ b: UInt8, _ p: Double, _ listed: Bool) {
            guard cls.allows(b), MRZ.characterValue(b) != nil else { return }
            if let i = list.firstIndex(where: { $0.b == b }) { list[i].p = max(list[i].p, p); return }
            if b != observed && !forced,
               let v0 = MRZ.characterValue(observed), let v1 = MRZ.characterValue(b), (v1 - v0) % 10 == 0 { return }
            list.append((b, p, listed))
        }
        let given = l < posteriors.count && c < posteriors[l].count ? posteriors[l][c] : []
        let others = given.filter { $0.b != observed }.reduce(0) { $0 + $1.p }
        let read = posterior(l, c, observed) ?? max(Self.floorPosterior, 1 - others)
        add(observed, read, true)
        if !open && !forced { return Cell(line: l, column: c, options: list.map { ($0.b, 0, true) }) }
        for g in given { add(g.b, g.p, g.p > Self.floorPosterior) }
        if (tableAllowed && table) || forced {
            if let d = Corrector.toDigit[observed] { add(d, Self.floorPosterior, false) }
            if Corrector.toFiller.contains(observed) { add(Corrector.lt, Self.floorPosterior, false) }
            if cls == .alnum, let x = Corrector.toLetter[observed] { add(x, Self.floorPosterior, false) }
        }
        // The unseen rival: a character the recogniser did not list (the mass it left unlisted), of
        // which about one in ten has the check-digit value a failing check needs.
        let unlisted = max(Self.floorPosterior, 1 - others - read)
        // Document numbers and optional data: a letter weighs `letterLogPrior` against a digit.
        let kindCell = layout.fields.contains { Self.kindField($0) && $0.line == l && $0.range.contains(c) }
        var options = list.map { o in
            (b: o.b, score: log(max(o.p, Self.floorPosterior)) + (kindCell && o.b >= 0x41 && o.b <= 0x5A ? Self.letterLogPrior : 0), listed: o.listed)
        }
        if unseen { options.append((Self.unseen, log(unlisted / 10), false)) }
        options.sort { $0.score > $1.score }
        return Cell(line: l, column: c, options: options)
    }

    /// Least posterior of the O/0 rival, relative to the read character's, for a cell of a reading
    /// that satisfies every check digit to count as doubtful (`review`): one in ten.
    static let reviewDoubt = 0.1

    /// Reviews a reading that satisfies every check digit for O↔0 swaps that cancel in a field's 7-3-1
    /// sum (six at weights 1+7+1+7+3+1 = 20 in 0_pass-lva's `LTOO0OOOO`): OCR-B's O and 0 differ by a
    /// few pixels and are the pair the classifier leaves most often near 50/50. The cells read O or 0
    /// whose other one got ≥ `reviewDoubt` of the read character's posterior are opened to O and 0
    /// only, in every field check digit covering at least two of them; the reading is replaced only by
    /// an admissible reading that beats it and every other by `margin` (the positional prior deciding
    /// what the pixels cannot). Other look-alikes are not reviewed: with a letter 15× rarer than a digit
    /// the prior alone would turn confident letters (I 0.91 against 1 0.08) into digits, which the
    /// posterior corpus of `idvd bench mrz` showed as wrong corrections. Nil when nothing is doubtful
    /// or nothing is decisive (the reading stands as read).
    func review(_ rows: Rows, layout: Layout) -> Outcome? {
        let o = UInt8(ascii: "O"), zero = UInt8(ascii: "0")
        func doubtful(_ l: Int, _ c: Int) -> Bool {
            let b = rows[l][c]
            guard b == o || b == zero, classes[l][c]?.allows(b == o ? zero : o) == true, let read = posterior(l, c, b),
                  let rival = posterior(l, c, b == o ? zero : o) else { return false }
            return rival >= Self.reviewDoubt * read
        }
        let opened = layout.checks.indices.filter { i in
            i != layout.compositeIndex && Self.cells(Layout(fields: [], checks: [layout.checks[i]], compositeIndex: nil)).filter { doubtful($0.0, $0.1) }.count >= 2
        }
        guard !opened.isEmpty else { return nil }
        let cells = Self.cells(layout).map { p -> Cell in
            let open = doubtful(p.0, p.1) && opened.contains { layout.checks[$0].covers(p.0, p.1) }
            var cell = cell(rows, layout, p.0, p.1, unseen: false, open: open, table: false)
            if open { cell.options = cell.options.filter { $0.b == o || $0.b == zero } }
            return cell
        }
        guard case .decided(let changes, let margin) = search(rows, layout: layout, cells: cells), !changes.isEmpty else { return nil }
        return .decided(changes, margin: margin)
    }

    /// Decodes `rows` (normalised, `«` already mapped) under `layout`. A reading that already satisfies
    /// every check digit is only reviewed (`review`).
    func decode(_ rows: Rows, layout: Layout) -> Outcome {
        if MRZParser.clean(rows, layout: layout, classes: classes) { return review(rows, layout: layout) ?? .unchanged }
        // Where an unlisted character may hide: the cells of the failing field check digits, or when
        // only the composite fails, the cells only the composite covers.
        let groups = layout.checks.map(MRZParser.group)
        let failing = layout.checks.indices.filter { $0 != layout.compositeIndex && !Corrector.holds(groups[$0], rows) }
        // Only cells a failing check digit covers may change (or cells whose character cannot stand
        // there): a field whose own check digit holds is kept as read.
        let compositeFails = layout.compositeIndex.map { !Corrector.holds(groups[$0], rows) } ?? false
        let compositeOnly = { (l: Int, c: Int) in
            !layout.checks.indices.contains { $0 != layout.compositeIndex && layout.checks[$0].covers(l, c) }
        }
        let cells = Self.cells(layout).map { p -> Cell in
            let open = failing.contains { layout.checks[$0].covers(p.0, p.1) } || (compositeFails && compositeOnly(p.0, p.1))
            return cell(rows, layout, p.0, p.1, unseen: open, open: open)
        }
        return search(rows, layout: layout, cells: cells)
    }

    /// The changes of `changes` that lack the recogniser's support: a cell whose character could
    /// stand where it is (nothing forces a change) changed to a character the recogniser did not
    /// list (`Corrector.Source.confusionTable`: only the look-alike table proposed it, at
    /// `floorPosterior`). Such a change is never applied: a cell read without doubt is not changed
    /// just to make a check digit hold. A document number with one character altered (a forgery, or
    /// a misprint) has a failing check digit that some look-alike swap elsewhere in the number
    /// satisfies all too often (81 of the 315 one-character edits of ICAO's `L898902C3`: 8→B, 0→O, C→<, …),
    /// and the composite check digit cannot object: it moves with the field's own sum. The
    /// positional prior favoured such swaps further (a filler breaks the letter–digit run; a letter
    /// costs `letterLogPrior`), so they beat the unseen rivals of the cells read confidently.
    func unsupported(_ changes: [Corrector.Change], _ rows: Rows) -> [Corrector.Change] {
        changes.filter { c in
            c.source == .confusionTable && classes[c.line][c.column]?.allows(rows[c.line][c.column]) == true
        }
    }

    /// The best-first search over `cells`' options (see the type's documentation).
    func search(_ rows: Rows, layout: Layout, cells: [Cell]) -> Outcome {
        if cells.contains(where: { $0.options.isEmpty }) { return .none }
        // Only cells with a choice take part in the search; the others keep their single option.
        var base = rows
        for c in cells { base[c.line][c.column] = c.options[0].b }
        let baseFiller = cells.contains { c in
            base[c.line][c.column] != rows[c.line][c.column] && (base[c.line][c.column] == Corrector.lt || rows[c.line][c.column] == Corrector.lt)
        }
        let free = cells.filter { $0.options.count > 1 }
        let deltas = free.map { c in c.options.map { c.options[0].score - $0.score } }

        /// The layout of `trial` when it holds every check digit, else nil. One cell may be `unseen`: it
        /// then stands for the unlisted character of the one check-digit value every check covering it needs.
        let baseGroups = layout.checks.map(MRZParser.group)
        func admissible(_ trial: Rows, _ changedFiller: Bool, unseenAt u: (Int, Int)?) -> Layout? {
            guard let u else {
                if !changedFiller { return baseGroups.allSatisfy { Corrector.holds($0, trial) } ? layout : nil }
                let lay = Layout.make(format, rows: trial, deviations: deviations)
                if lay.introducesInnerFiller(rows, trial) { return nil }
                return lay.checks.allSatisfy { Corrector.holds(MRZParser.group($0), trial) } ? lay : nil
            }
            var probe = trial
            probe[u.0][u.1] = rows[u.0][u.1] == Self.unseen ? Corrector.lt : rows[u.0][u.1]
            let lay = changedFiller ? Layout.make(format, rows: probe, deviations: deviations) : layout
            if changedFiller && lay.introducesInnerFiller(rows, probe) { return nil }
            var residue: Int?
            for ch in lay.checks {
                guard ch.covers(u.0, u.1) else {
                    if !Corrector.holds(MRZParser.group(ch), trial) { return nil }
                    continue
                }
                let g = MRZParser.group(ch)
                var sum = 0, weight = 0
                for p in g.covered {
                    if p.line == u.0 && p.column == u.1 { weight = p.weight; continue }
                    guard let v = MRZ.characterValue(trial[p.line][p.column]) else { return nil }
                    sum += v * p.weight
                }
                let need: Int
                if g.digit.line == u.0 && g.digit.column == u.1 {
                    need = sum % 10
                } else {
                    let d = trial[g.digit.line][g.digit.column]
                    guard d >= 0x30, d <= 0x39 else { return nil }
                    let inverse = [1: 1, 3: 7, 7: 3][weight] ?? 1
                    need = (((Int(d - 0x30) - sum) % 10 + 10) % 10 * inverse) % 10
                }
                if let r = residue, r != need { return nil }
                residue = need
            }
            // The character needed is one the cell already offers: that hypothesis is searched as such.
            if let r = residue, let cell = free.first(where: { $0.line == u.0 && $0.column == u.1 }),
               cell.options.contains(where: { $0.b != Self.unseen && (MRZ.characterValue($0.b) ?? -1) % 10 == r }) { return nil }
            return lay
        }
        // Best-first over index vectors: every vector is generated once, from one parent, and its cost
        // (sum of deltas) never falls below its parent's. The cost is a lower bound of the full cost (the
        // positional prior only adds), so the search may stop once the frontier lies `margin` beyond the
        // best full cost found.
        // A vector is stored as its last step on top of its prefix (`steps`, an arena). The free cells
        // are ordered by their first delta, which lets every vector have one parent and at most three
        // children, each no cheaper: bump the last non-zero index; add index 1 at the next cell; or,
        // when the last index is 1, move it to the next cell. (The parent of a vector whose last
        // non-zero index L is 1 is the vector without it when cell L − 1 is non-zero, else the vector
        // with it at L − 1.) Vectors hold few non-zero indices, so rebuilding one by walking its
        // chain is cheap.
        let order = free.indices.sorted { (deltas[$0].count > 1 ? deltas[$0][1] : .infinity, $0) < (deltas[$1].count > 1 ? deltas[$1][1] : .infinity, $1) }
        let sortedFree = order.map { free[$0] }, sortedDeltas = order.map { deltas[$0] }
        var steps: [(prefix: Int32, k: Int32, i: Int32)] = []
        var heap = MinHeap()
        heap.push(.init(cost: 0, id: -1, last: -1))
        var found: [(cost: Double, unseen: Bool, rows: Rows)] = []
        var bestFound = Double.infinity
        var examined = 0
        var frontier = Double.infinity
        var work = base
        var chain: [(k: Int, i: Int)] = []
        func push(_ cost: Double, _ step: (prefix: Int32, k: Int32, i: Int32)) {
            steps.append(step)
            heap.push(.init(cost: cost, id: Int32(steps.count - 1), last: step.k))
        }
        while let node = heap.pop() {
            if node.cost > bestFound + Self.margin + log(10.0) { frontier = node.cost; break }
            examined += 1
            if examined > Self.budget { return found.isEmpty ? .none : .ambiguous(count: found.count) }
            chain.removeAll(keepingCapacity: true)
            var id = node.id
            while id >= 0 { let st = steps[Int(id)]; chain.append((Int(st.k), Int(st.i))); id = st.prefix }
            var filler = baseFiller
            var unseenAt: (Int, Int)?, unseenCount = 0
            for (k, i) in chain {
                let cell = sortedFree[k]
                let b = cell.options[i].b
                if b == Self.unseen { unseenAt = (cell.line, cell.column); unseenCount += 1 }
                if b == Corrector.lt || rows[cell.line][cell.column] == Corrector.lt { filler = true }
                work[cell.line][cell.column] = b
            }
            if unseenCount <= 1, let lay = admissible(work, filler, unseenAt: unseenAt) {
                var kinds = work
                if let u = unseenAt { kinds[u.0][u.1] = rows[u.0][u.1] }
                let cost = node.cost - Self.kindChangeLogPrior * Double(Self.kindChanges(kinds, lay))
                found.append((cost, unseenAt != nil, work))
                bestFound = min(bestFound, cost)
            }
            for (k, _) in chain { work[sortedFree[k].line][sortedFree[k].column] = base[sortedFree[k].line][sortedFree[k].column] }
            let last = Int(node.last)
            let top = node.id >= 0 ? steps[Int(node.id)] : nil
            if let top {
                let i = Int(top.i), d = sortedDeltas[last]
                if i + 1 < d.count { push(node.cost - d[i] + d[i + 1], (top.prefix, top.k, Int32(i + 1))) }
            }
            let next = last + 1
            if next < sortedFree.count, sortedDeltas[next].count > 1 {
                push(node.cost + sortedDeltas[next][1], (node.id, Int32(next), 1))
                if let top, top.i == 1 {
                    push(node.cost - sortedDeltas[last][1] + sortedDeltas[next][1], (top.prefix, Int32(next), 1))
                }
            }
        }
        found.sort { $0.cost < $1.cost }
        // Without a composite check digit (MRV-A/B) a change only one check digit confirms passes
        // by chance one time in ten, not one in a hundred: it needs ten times the margin.
        var needed = Self.margin
        if layout.compositeIndex == nil, let best = found.first, cells.contains(where: { c in
            best.rows[c.line][c.column] != rows[c.line][c.column]
                && layout.checks.filter({ $0.covers(c.line, c.column) }).count < 2 && classes[c.line][c.column]?.allows(rows[c.line][c.column]) == true
        }) { needed += log(10.0) }
        if found.count > 1, found[1].cost < found[0].cost + needed {
            return .ambiguous(count: found.filter { $0.cost < found[0].cost + needed }.count)
        }
        frontier = min(frontier, found.count > 1 ? found[1].cost : .infinity)
        // The best explanation holds a character the recogniser did not list: nothing to apply.
        if let best = found.first, best.unseen { return .ambiguous(count: 1) }
        guard let best = found.first else { return .none }
        var changes: [Corrector.Change] = []
        for c in cells where best.rows[c.line][c.column] != rows[c.line][c.column] {
            let b = best.rows[c.line][c.column]
            let listed = c.options.first { $0.b == b }?.listed ?? false
            changes.append(.init(line: c.line, column: c.column, to: b, source: listed ? .ocrAlternative : .confusionTable, cost: 0))
        }
        if !unsupported(changes, rows).isEmpty { return .unsupported(changes) }
        return .decided(changes, margin: frontier - best.cost)
    }
}

/// A binary min-heap of search nodes by cost.
struct MinHeap {
    /// `id`: the vector's last step in the search's arena (-1: the all-zero vector); `last`: the
    /// index of that step's cell (-1 for the all-zero vector).
    struct Node { let cost: Double; let id: Int32; let last: Int32 }
    private var items: [Node] = []

    func peek() -> Node? { items.first }

    mutating func push(_ n: Node) {
        items.append(n)
        var i = items.count - 1
        while i > 0 {
            let p = (i - 1) / 2
            if items[p].cost <= items[i].cost { break }
            items.swapAt(p, i); i = p
        }
    }

    mutating func pop() -> Node? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < items.count, items[l].cost < items[m].cost { m = l }
            if r < items.count, items[r].cost < items[m].cost { m = r }
            if m == i { break }
            items.swapAt(m, i); i = m
        }
        return top
    }
}

extension CheckLayout {
    /// Whether the check digit covers (or is) the cell.
    func covers(_ line: Int, _ column: Int) -> Bool {
        (digit.line == line && digit.column == column) || segments.contains { $0.line == line && $0.range.contains(column) }
    }
}
