import Foundation

/// Country and organisation codes accepted in the issuing-state and nationality fields, and the
/// X.509 countryName (ISO 3166-1 alpha-2) each stands for in the issuing state's certificates.
public enum CountryCodes {
    /// ISO 3166-1 alpha-3 → alpha-2, every officially assigned code (249, as in Debian's iso-codes
    /// 3166-1 table, `iso_3166-1.json`). The alpha-3 code is what ICAO 9303-3 §5 puts in the MRZ; the
    /// alpha-2 code is the countryName (X.520 id-at-countryName) that ICAO 9303-12 §7.1.1 requires in
    /// the subject of the state's CSCA and document signer certificates.
    static let iso3166: [String: String] = Dictionary(uniqueKeysWithValues: [
        "ABW:AW AFG:AF AGO:AO AIA:AI ALA:AX ALB:AL AND:AD ARE:AE ARG:AR ARM:AM ASM:AS ATA:AQ ATF:TF",
        "ATG:AG AUS:AU AUT:AT AZE:AZ BDI:BI BEL:BE BEN:BJ BES:BQ BFA:BF BGD:BD BGR:BG BHR:BH BHS:BS",
        "BIH:BA BLM:BL BLR:BY BLZ:BZ BMU:BM BOL:BO BRA:BR BRB:BB BRN:BN BTN:BT BVT:BV BWA:BW CAF:CF",
        "CAN:CA CCK:CC CHE:CH CHL:CL CHN:CN CIV:CI CMR:CM COD:CD COG:CG COK:CK COL:CO COM:KM CPV:CV",
        "CRI:CR CUB:CU CUW:CW CXR:CX CYM:KY CYP:CY CZE:CZ DEU:DE DJI:DJ DMA:DM DNK:DK DOM:DO DZA:DZ",
        "ECU:EC EGY:EG ERI:ER ESH:EH ESP:ES EST:EE ETH:ET FIN:FI FJI:FJ FLK:FK FRA:FR FRO:FO FSM:FM",
        "GAB:GA GBR:GB GEO:GE GGY:GG GHA:GH GIB:GI GIN:GN GLP:GP GMB:GM GNB:GW GNQ:GQ GRC:GR GRD:GD",
        "GRL:GL GTM:GT GUF:GF GUM:GU GUY:GY HKG:HK HMD:HM HND:HN HRV:HR HTI:HT HUN:HU IDN:ID IMN:IM",
        "IND:IN IOT:IO IRL:IE IRN:IR IRQ:IQ ISL:IS ISR:IL ITA:IT JAM:JM JEY:JE JOR:JO JPN:JP KAZ:KZ",
        "KEN:KE KGZ:KG KHM:KH KIR:KI KNA:KN KOR:KR KWT:KW LAO:LA LBN:LB LBR:LR LBY:LY LCA:LC LIE:LI",
        "LKA:LK LSO:LS LTU:LT LUX:LU LVA:LV MAC:MO MAF:MF MAR:MA MCO:MC MDA:MD MDG:MG MDV:MV MEX:MX",
        "MHL:MH MKD:MK MLI:ML MLT:MT MMR:MM MNE:ME MNG:MN MNP:MP MOZ:MZ MRT:MR MSR:MS MTQ:MQ MUS:MU",
        "MWI:MW MYS:MY MYT:YT NAM:NA NCL:NC NER:NE NFK:NF NGA:NG NIC:NI NIU:NU NLD:NL NOR:NO NPL:NP",
        "NRU:NR NZL:NZ OMN:OM PAK:PK PAN:PA PCN:PN PER:PE PHL:PH PLW:PW PNG:PG POL:PL PRI:PR PRK:KP",
        "PRT:PT PRY:PY PSE:PS PYF:PF QAT:QA REU:RE ROU:RO RUS:RU RWA:RW SAU:SA SDN:SD SEN:SN SGP:SG",
        "SGS:GS SHN:SH SJM:SJ SLB:SB SLE:SL SLV:SV SMR:SM SOM:SO SPM:PM SRB:RS SSD:SS STP:ST SUR:SR",
        "SVK:SK SVN:SI SWE:SE SWZ:SZ SXM:SX SYC:SC SYR:SY TCA:TC TCD:TD TGO:TG THA:TH TJK:TJ TKL:TK",
        "TKM:TM TLS:TL TON:TO TTO:TT TUN:TN TUR:TR TUV:TV TWN:TW TZA:TZ UGA:UG UKR:UA UMI:UM URY:UY",
        "USA:US UZB:UZ VAT:VA VCT:VC VEN:VE VGB:VG VIR:VI VNM:VN VUT:VU WLF:WF WSM:WS YEM:YE ZAF:ZA",
        "ZMB:ZM ZWE:ZW",
    ].flatMap { $0.split(separator: " ").map { pair -> (String, String) in
        let p = pair.split(separator: ":")
        return (String(p[0]), String(p[1]))
    } })

    /// ISO 3166-1 alpha-3 (the keys of ``iso3166``).
    static let iso3166Alpha3: Set<String> = Set(iso3166.keys)

    /// Doc 9303-3 §5 codes outside ISO 3166-1 (Parts A–E) and the specimen state Utopia.
    static let icao: Set<String> = [
        "D", "GBD", "GBN", "GBO", "GBP", "GBS", "RKS",          // Part A: Germany, British, Kosovo
        "EUE",                                                  // Part B: European Union
        "UNO", "UNA", "UNK",                                    // Part C: United Nations
        "XBA", "XIM", "XCC", "XCE", "XCO", "XEC", "XPO", "XES", "XMP", "XOM", "XDC", // Part D
        "XXA", "XXB", "XXC", "XXX",                             // Part E: stateless, refugee, unspecified
        "UTO",                                                  // specimen documents (Utopia)
    ]

    /// The X.509 countryName values the certificates of the ICAO codes outside ISO 3166-1 carry
    /// (ICAO 9303-12 §7.1.1 asks for the issuing state's ISO 3166-1 alpha-2 code; these have none, or
    /// another one, so the code their signers use in practice is listed):
    /// - `D` (Germany, Part A): `DE`, as every German CSCA and DSC (the BSI 2008 test DSC: C=DE).
    /// - `GBD` `GBN` `GBO` `GBP` `GBS` (British nationals of several kinds, Part A): `GB`, the United
    ///   Kingdom's CSCA issues for them.
    /// - `RKS` (Kosovo, Part A): `XK` (the user-assigned code the EU and others use for Kosovo) and
    ///   `KS`, which Kosovo's own CSCA carries (`CN=CSCA-KOSOVO, O=GV, C=KS` in the NL master list of 2021-12-07).
    /// - `EUE` (European Union, Part B): `EU` (`CN=EU Laissez Passer CSCA, C=EU` in that list).
    /// - `UNO` `UNA` `UNK` (United Nations, Part C): `UN` and `ZZ` (that list holds a
    ///   `CN=United Nations CSCA` under each).
    /// - `UTO` (ICAO's specimen state Utopia): `UT`, as OpenIDV's test PKI (`TestPKI`) and the usual
    ///   Utopia test certificates.
    /// The Part D organisations (`XBA` … `XOM`, `XPO`) have no code here: no signer country is known
    /// for them, so a chip they issue cannot be tied to its signer's country. Part E (`XXA` … `XXX`)
    /// are nationalities, never an issuing state.
    static let icaoCountryNames: [String: [String]] = [
        "D": ["DE"], "GBD": ["GB"], "GBN": ["GB"], "GBO": ["GB"], "GBP": ["GB"], "GBS": ["GB"],
        "RKS": ["XK", "KS"], "EUE": ["EU"], "UNO": ["UN", "ZZ"], "UNA": ["UN", "ZZ"], "UNK": ["UN", "ZZ"],
        "UTO": ["UT"],
    ]

    /// The ISO 3166-1 alpha-2 code of an ISO 3166-1 alpha-3 code (`NLD` → `NL`); nil for any other string,
    /// ICAO's own codes (`D`, `UTO`, …) included.
    public static func alpha2(ofAlpha3 code: String) -> String? { iso3166[code] }

    /// The ISO 3166-1 alpha-3 code of an alpha-2 code (`NL` → `NLD`, case ignored); nil for an unassigned one.
    public static func alpha3(ofAlpha2 code: String) -> String? { alpha3ByAlpha2[code.uppercased()] }
    static let alpha3ByAlpha2: [String: String] = Dictionary(uniqueKeysWithValues: iso3166.map { ($0.value, $0.key) })

    /// The X.509 countryName values (upper case) that the CSCA and document signer certificates of the
    /// state or organisation with ICAO 9303-3 §5 code `issuingState` (fillers removed: `D`, `NLD`)
    /// carry: the ISO 3166-1 alpha-2 code (ICAO 9303-12 §7.1.1), or ``icaoCountryNames`` for ICAO's
    /// own codes. Empty when none is known (a Part D organisation, Part E, an unknown code).
    public static func x509CountryNames(ofIssuingState issuingState: String) -> [String] {
        if let a2 = iso3166[issuingState] { return [a2] }
        return icaoCountryNames[issuingState] ?? []
    }

    /// Whether `code` (fillers already removed) is a known issuing-state / nationality code.
    public static func isKnown(_ code: String) -> Bool { iso3166Alpha3.contains(code) || icao.contains(code) }

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
