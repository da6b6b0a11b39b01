import Foundation

/// Country and organisation codes accepted in the issuing-state and nationality fields.
enum CountryCodes {
    /// ISO 3166-1 alpha-3 (249 codes, as in Debian's iso-codes 3166-1 table).
    static let iso3166Alpha3: Set<String> = Set([
        "ABW AFG AGO AIA ALA ALB AND ARE ARG ARM ASM ATA ATF ATG AUS AUT AZE BDI BEL BEN",
        "BES BFA BGD BGR BHR BHS BIH BLM BLR BLZ BMU BOL BRA BRB BRN BTN BVT BWA CAF CAN",
        "CCK CHE CHL CHN CIV CMR COD COG COK COL COM CPV CRI CUB CUW CXR CYM CYP CZE DEU",
        "DJI DMA DNK DOM DZA ECU EGY ERI ESH ESP EST ETH FIN FJI FLK FRA FRO FSM GAB GBR",
        "GEO GGY GHA GIB GIN GLP GMB GNB GNQ GRC GRD GRL GTM GUF GUM GUY HKG HMD HND HRV",
        "HTI HUN IDN IMN IND IOT IRL IRN IRQ ISL ISR ITA JAM JEY JOR JPN KAZ KEN KGZ KHM",
        "KIR KNA KOR KWT LAO LBN LBR LBY LCA LIE LKA LSO LTU LUX LVA MAC MAF MAR MCO MDA",
        "MDG MDV MEX MHL MKD MLI MLT MMR MNE MNG MNP MOZ MRT MSR MTQ MUS MWI MYS MYT NAM",
        "NCL NER NFK NGA NIC NIU NLD NOR NPL NRU NZL OMN PAK PAN PCN PER PHL PLW PNG POL",
        "PRI PRK PRT PRY PSE PYF QAT REU ROU RUS RWA SAU SDN SEN SGP SGS SHN SJM SLB SLE",
        "SLV SMR SOM SPM SRB SSD STP SUR SVK SVN SWE SWZ SXM SYC SYR TCA TCD TGO THA TJK",
        "TKL TKM TLS TON TTO TUN TUR TUV TWN TZA UGA UKR UMI URY USA UZB VAT VCT VEN VGB",
        "VIR VNM VUT WLF WSM YEM ZAF ZMB ZWE",
    ].flatMap { $0.split(separator: " ").map(String.init) })

    /// Doc 9303-3 §5 codes outside ISO 3166-1 (Parts A–E) and the specimen state Utopia.
    static let icao: Set<String> = [
        "D", "GBD", "GBN", "GBO", "GBP", "GBS", "RKS",          // Part A: Germany, British, Kosovo
        "EUE",                                                  // Part B: European Union
        "UNO", "UNA", "UNK",                                    // Part C: United Nations
        "XBA", "XIM", "XCC", "XCE", "XCO", "XEC", "XPO", "XES", "XMP", "XOM", "XDC", // Part D
        "XXA", "XXB", "XXC", "XXX",                             // Part E: stateless, refugee, unspecified
        "UTO",                                                  // specimen documents (Utopia)
    ]

    /// Whether `code` (fillers already removed) is a known issuing-state / nationality code.
    static func isKnown(_ code: String) -> Bool { iso3166Alpha3.contains(code) || icao.contains(code) }

    /// Every known code as the three MRZ cells it fills (`D` → `D<<`), sorted.
    static let cells: [[UInt8]] = iso3166Alpha3.union(icao).sorted().map { Array(($0 + "<<<").utf8.prefix(3)) }

    /// Log prior of a code outside the list (a historical code such as the `BDR` of old German
    /// specimens, a state newer than the list) against one on it: 1 in 1,000. With the decoder's
    /// 100:1 margin this means a listed code replaces the reading only when the classifier gave it at
    /// least 1/10 of the likelihood of what it read. Ratios (listed code : reading) seen on c1000 and
    /// the real specimens: `EQY`→EGY 0.94, `NLO`→NLD 0.52, `UTD`→UTO 0.66, `GGR`→GBR 0.074, `FSP`→ESP
    /// 0.0002; the correct out-of-list `BDR` of 100_pass-bdr has no listed code above 0.002. Chosen on
    /// the code-misread corpus of `idvd bench mrz`'s generator (seed 11, 20,000 MRZs, 1–2 misread
    /// code cells): prior 1/2,000 gave 9,011 right and 10 wrong replacements, 1/1,000 7,369 and 1,
    /// 1/500 5,032 and 1.
    static let outOfListLogPrior = log(1e-3)

    /// The 37 MRZ symbols (Doc 9303-3 §4.3).
    static let symbols: [UInt8] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ<".utf8)

    /// Posterior assumed for a character the recogniser did not list, at least (the rest of its mass
    /// spread evenly over the unlisted symbols otherwise).
    static let floorPosterior = 1e-6

    /// What the code-list decode concluded about one code field.
    enum Decision: Equatable {
        /// The reading is a known code, all fillers (an empty field, e.g. Macao's TD1 nationality), or
        /// carries no posteriors: nothing to decide.
        case keep
        /// The best listed code beats every other listed code and the out-of-list reading by the margin.
        case replace([UInt8])
        /// No listed code is decisive: the listed codes within the margin of the best (may be empty
        /// when the reading itself, out of the list, is the better explanation).
        case undecided([String])
    }

    /// Share of documents whose issuing state equals the holder's nationality, measured on the ground
    /// truth of the 33 real specimens (`testdata/mrz-images/ground_truth.tsv`): passports (document
    /// code `P`, Doc 9303-4) 17 of 19 — the exceptions a stateless holder (`XXC`, Part E, which the
    /// prior leaves out anyway) and the old German `BDR`/`D` specimen; a national passport is issued to
    /// the state's own nationals. Other documents (TD1/TD2 cards, visas: residence permits and
    /// foreigners' cards differ by design) 8 of 13. The generator of the c1000 corpus: 82 % and 80 %.
    static let passportAgreement = 17.0 / 19
    static let otherAgreement = 8.0 / 13

    /// Doc 9303-3 §5 Part E: stateless persons, refugees and unspecified nationality. A travel document
    /// issued to such a holder never carries the issuing state as nationality: no agreement prior.
    static func isPartE(_ code: [UInt8]) -> Bool { code.starts(with: Array("XX".utf8)) }

    /// Maximum-a-posteriori choice of an issuing-state or nationality code (Doc 9303-3 §5) from the
    /// three cells' posteriors. `read`: the three bytes as read; `candidates[i]`: cell `i`'s listed
    /// characters with posteriors (0…1; the read character gets the unlisted rest when absent).
    /// Score of a code: Σ log P(cell holds its character); unlisted characters share the mass the
    /// recogniser left unlisted (at least `floorPosterior`). The reading out of the list competes with
    /// prior `outOfListLogPrior`; the winner must beat every rival by `margin` (log-odds).
    ///
    /// `partner`: the other code field of the document (issuing state ↔ nationality) when it holds a
    /// known code outside Part E, with `agreement` the share of documents whose two fields agree
    /// (`passportAgreement`, `otherAgreement`). The prior then conditions on it: the partner's code
    /// has prior `agreement`, every other listed code (1 − `agreement`)/N (N known codes, uniform), the
    /// out-of-list reading that times `outOfListPrior`. With 17/19 this favours the partner's code
    /// 2,400:1 over any one other code, so a partner `POL` turns an issuing state read `ROL` (R 0.996,
    /// P 0.0044) into `POL` while a different code needs the pixels against it.
    static func decide(read: [UInt8], candidates: [[(b: UInt8, p: Double)]], margin: Double,
                       outOfListPrior: Double = outOfListLogPrior, partner: [UInt8]? = nil, agreement: Double = 0) -> Decision {
        guard read.count == 3, candidates.count == 3, candidates.allSatisfy({ !$0.isEmpty }) else { return .keep }
        let text = String(decoding: read, as: UTF8.self)
        var trimmed = Substring(text)
        while trimmed.last == "<" { trimmed = trimmed.dropLast() }
        if trimmed.isEmpty || (isKnown(String(trimmed)) && !trimmed.contains("<")) { return .keep }
        // Per cell: log posterior of every MRZ symbol.
        let tables: [[UInt8: Double]] = (0..<3).map { i in
            var listed: [UInt8: Double] = [:]
            for c in candidates[i] where c.p.isFinite { listed[c.b] = max(listed[c.b] ?? 0, min(max(c.p, 0), 1)) }
            let others = listed.filter { $0.key != read[i] }.values.reduce(0, +)
            if listed[read[i]] == nil { listed[read[i]] = max(0, 1 - others) }
            let unlisted = max(0, 1 - listed.values.reduce(0, +)) / Double(max(1, 37 - listed.count))
            var table: [UInt8: Double] = [:]
            for b in symbols { table[b] = log(max(listed[b] ?? unlisted, floorPosterior)) }
            return table
        }
        // The agreement prior (see above): log prior of a listed code, of the partner's code, and the
        // out-of-list reading's extra term.
        var other = 0.0, same = 0.0
        var agreeWith: [UInt8]?
        if let partner, partner.count == 3, agreement > 0, agreement < 1, cells.contains(partner), !isPartE(partner) {
            agreeWith = partner
            other = log((1 - agreement) / Double(cells.count))
            same = log(agreement)
        }
        func score(_ code: [UInt8]) -> Double {
            (0..<3).reduce(0) { $0 + (tables[$1][code[$1]] ?? log(floorPosterior)) } + (agreeWith == nil ? 0 : (code == agreeWith! ? same : other))
        }
        let ranked = cells.map { (code: $0, score: score($0)) }.sorted { $0.score > $1.score }
        let outOfList = (0..<3).reduce(0) { $0 + (tables[$1][read[$1]] ?? log(floorPosterior)) } + other + outOfListPrior
        guard let best = ranked.first else { return .keep }
        let rival = max(ranked.count > 1 ? ranked[1].score : -.infinity, outOfList)
        if best.score >= rival + margin { return .replace(best.code) }
        return .undecided(ranked.prefix { $0.score > best.score - margin && $0.score > outOfList - margin }
            .map { String(decoding: $0.code, as: UTF8.self) })
    }
}
