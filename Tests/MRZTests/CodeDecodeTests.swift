import XCTest
@testable import MRZ

/// Issuing-state and nationality codes read outside ICAO 9303-3 §5 (`CountryCodes.decide`,
/// `MRZParser.parse(_:posteriors:)`): replaced by the listed code the cells' posteriors favour by
/// 100:1 over every other listed code and over the reading itself, else left as read and reported.
final class CodeDecodeTests: XCTestCase {
    func cands(_ s: [(Character, Double)]) -> [(b: UInt8, p: Double)] { s.map { ($0.0.asciiValue!, $0.1) } }
    func decide(_ read: String, _ cells: [[(Character, Double)]]) -> CountryCodes.Decision {
        CountryCodes.decide(read: Array(read.utf8), candidates: cells.map(cands), margin: MRZDecoder.margin)
    }

    /// Every code the sample generator and the specimen renderer use is on the list (`D` as `D<<`).
    func testGeneratorCodesAreListed() {
        for code in MRZSampleGenerator.codes { XCTAssertTrue(CountryCodes.isKnown(code), code) }
        XCTAssertTrue(CountryCodes.cells.contains(Array("D<<".utf8)))
        XCTAssertTrue(CountryCodes.cells.contains(Array("UTO".utf8)))
        XCTAssertFalse(CountryCodes.isKnown("EQY"))
        XCTAssertFalse(CountryCodes.isKnown("UTD"))
        XCTAssertEqual(CountryCodes.cells.count, CountryCodes.iso3166Alpha3.count + CountryCodes.icao.count)
    }

    /// 24_pass-egy's nationality as the classifier read it: `EQY` with Q 0.4854 / G 0.4542 (measured).
    func testRealEgyptianNationality() {
        let d = decide("EQY", [[("E", 0.9981), ("R", 0.0011), ("B", 0.0002), ("8", 0.0002)],
                               [("Q", 0.4854), ("G", 0.4542), ("4", 0.0519), ("S", 0.0042), ("O", 0.0017)],
                               [("Y", 0.9965), ("T", 0.0034)]])
        XCTAssertEqual(d, .replace(Array("EGY".utf8)))
        // c1000's GGR (GBR: B at 0.0363 against G 0.4936, ratio 0.074) is below 1/10: left as read.
        let ggr = decide("GGR", [[("G", 0.9995)], [("G", 0.4936), ("R", 0.3455), ("O", 0.0574), ("B", 0.0363), ("9", 0.0219)], [("R", 1.0)]])
        XCTAssertNotEqual(ggr, .replace(Array("GBR".utf8)))
    }

    /// A listed reading, an empty (all-filler) field and a reading without posteriors are kept.
    func testListedEmptyAndBareReadingsAreKept() {
        XCTAssertEqual(decide("NLD", [[("N", 0.5), ("H", 0.5)], [("L", 1)], [("D", 1)]]), .keep)
        XCTAssertEqual(decide("D<<", [[("D", 0.6), ("O", 0.4)], [("<", 1)], [("<", 1)]]), .keep)
        XCTAssertEqual(decide("<<<", [[("<", 0.9)], [("<", 0.9)], [("<", 0.9)]]), .keep)
        XCTAssertEqual(decide("EQY", [[("E", 1)], [], [("Y", 1)]]), .keep)
    }

    /// Out of the list but read with certainty: 100_pass-bdr's `BDR` (posteriors measured on the
    /// specimen) and c1000's `FSP` (E at 0.0002): no listed code reaches 1/10 of the reading's
    /// likelihood, so the reading stays (and is reported as an unknown code).
    func testConfidentOutOfListReadingIsKept() {
        let bdr = decide("BDR", [[("B", 0.9991), ("8", 0.0008)], [("D", 0.9981), ("O", 0.0016), ("B", 0.0001), ("U", 0.0001), ("0", 0.0001)],
                                 [("R", 0.9999)]])
        guard case .undecided = bdr else { return XCTFail("\(bdr)") }
        let fsp = decide("FSP", [[("F", 0.9998), ("E", 0.0002)], [("S", 1.0)], [("P", 1.0)]])
        guard case .undecided = fsp else { return XCTFail("\(fsp)") }
    }

    /// Two listed codes the posteriors cannot separate (`CHF`: F 0.5, E 0.25, L 0.25 → CHE or CHL):
    /// nothing is applied and both are named.
    func testTwoListedCodesWithinTheMarginAreNotGuessed() {
        let d = decide("CHF", [[("C", 1)], [("H", 1)], [("F", 0.5), ("E", 0.25), ("L", 0.25)]])
        XCTAssertEqual(d, .undecided(["CHE", "CHL"]))
        let r = MRZParser().parse(["P<CHFERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"],
                                  posteriors: PosteriorDecodeTests.posteriors(
                                    ["P<CHFERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"],
                                    ["1:5": [MRZCandidate("F", 0.5), MRZCandidate("E", 0.25), MRZCandidate("L", 0.25)]]))
        XCTAssertEqual(r.fields.issuingState, "CHF")
        XCTAssertTrue(r.corrections.isEmpty)
        XCTAssertTrue(r.warnings.contains("issuing_state 'CHF' is not an ISO 3166-1 alpha-3 or ICAO code"), "\(r.warnings)")
    }

    /// 24_pass-egy as read (`AO00513764EQY…`), with the classifier's posteriors measured on the
    /// specimen (the cells it doubted; the others 0.99). The document number's O→0 is decided by the
    /// positional prior (a letter 15× less likely than a digit: `AU0…`, U at 0.0051, came within 60:1
    /// before), the nationality by the code list. Without posteriors nothing changes.
    func testRealEgyptianPassportFromPosteriors() {
        let read = ["P<EGYMABROUK<<ALAAELDIN<ISMAIL<MOHAMED<<<<<<", "AO00513764EQY6002202M1503151<<<<<<<<<<<<<<06"]
        let truth = ["P<EGYMABROUK<<ALAAELDIN<ISMAIL<MOHAMED<<<<<<", "A000513764EGY6002202M1503151<<<<<<<<<<<<<<06"]
        let post = PosteriorDecodeTests.posteriors(read, [
            "2:2": [MRZCandidate("O", 0.6894), MRZCandidate("0", 0.3023), MRZCandidate("U", 0.0051), MRZCandidate("D", 0.0022), MRZCandidate("Q", 0.0003)],
            "2:3": [MRZCandidate("0", 0.6033), MRZCandidate("O", 0.2864), MRZCandidate("U", 0.0524), MRZCandidate("D", 0.0309), MRZCandidate("Q", 0.0002)],
            "2:4": [MRZCandidate("0", 0.5753), MRZCandidate("O", 0.4185), MRZCandidate("D", 0.0004), MRZCandidate("Q", 0.0002)],
            "2:12": [MRZCandidate("Q", 0.4854), MRZCandidate("G", 0.4542), MRZCandidate("4", 0.0519), MRZCandidate("S", 0.0042), MRZCandidate("O", 0.0017)],
            "2:15": [MRZCandidate("0", 0.3871), MRZCandidate("O", 0.6014), MRZCandidate("D", 0.0092)],
            "2:16": [MRZCandidate("0", 0.1801), MRZCandidate("O", 0.7772), MRZCandidate("D", 0.0290)],
            "2:19": [MRZCandidate("0", 0.2122), MRZCandidate("O", 0.7685), MRZCandidate("D", 0.0144)],
            "2:24": [MRZCandidate("0", 0.6399), MRZCandidate("O", 0.3079), MRZCandidate("D", 0.0313)],
            "2:43": [MRZCandidate("0", 0.3219), MRZCandidate("O", 0.6282), MRZCandidate("D", 0.0433)],
        ])
        let r = MRZParser().parse(read, posteriors: post)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.lines, truth)
        XCTAssertEqual(r.corrections.map { "\($0.line):\($0.column) \($0.from)→\($0.to) \($0.field) \($0.source)" },
                       ["2:2 O→0 document_number ocr_alternative", "2:12 Q→G nationality code_list"])
        XCTAssertTrue(r.fields.nationalityKnown)
        let bare = MRZParser().parse(read)
        XCTAssertFalse(bare.valid)
        XCTAssertEqual(bare.fields.nationality, "EQY")
    }

    /// 0_pass-lva as read: `LTOO0OOOO4` satisfies its check digit (six O↔0 swaps at weights
    /// 1+7+1+7+3+1 cancel modulo 10), so before the review nothing was decoded. Posteriors measured on
    /// the specimen (O 0.52–0.68 against 0 0.32–0.48 in every cell): the likelihood favours the reading
    /// 13:1, the positional prior (six letters fewer, one run fewer) favours `LT0000000` far beyond 100:1.
    func testCancellingSwapsInAFieldThatHoldsAreReviewed() {
        let read = ["PALVAMOHAMADA<<FARIDA<<<<<<<<<<<<<<<<<<<<<<<", "LTOO0OOOO4XXC8605102F1210314111111<11648<<86"]
        let truth = ["PALVAMOHAMADA<<FARIDA<<<<<<<<<<<<<<<<<<<<<<<", "LT00000004XXC8605102F1210314111111<11648<<86"]
        func oz(_ o: Double, _ z: Double, _ d: Double, oFirst: Bool = true) -> [MRZCandidate] {
            oFirst ? [MRZCandidate("O", o), MRZCandidate("0", z), MRZCandidate("D", d), MRZCandidate("Q", 0.0003)]
                   : [MRZCandidate("0", z), MRZCandidate("O", o), MRZCandidate("D", d), MRZCandidate("Q", 0.0003)]
        }
        let post = PosteriorDecodeTests.posteriors(read, [
            "2:3": oz(0.5750, 0.4121, 0.0057), "2:4": oz(0.6792, 0.3155, 0.0025), "2:5": oz(0.4889, 0.5031, 0.0026, oFirst: false),
            "2:6": oz(0.5823, 0.4125, 0.0025), "2:7": oz(0.6775, 0.3186, 0.0013), "2:8": oz(0.5647, 0.4250, 0.0022),
            "2:9": oz(0.5168, 0.4784, 0.0011),
            "2:16": oz(0.2264, 0.7634, 0.0024, oFirst: false), "2:19": oz(0.2431, 0.7465, 0.0037, oFirst: false),
            "2:25": oz(0.4697, 0.5177, 0.0044, oFirst: false),
        ])
        let bare = MRZParser().parse(read)
        XCTAssertTrue(bare.valid, "every check digit holds for the misreading")
        XCTAssertEqual(bare.lines, read)
        let r = MRZParser().parse(read, posteriors: post)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.lines, truth)
        XCTAssertEqual(r.corrections.map { "\($0.column)" }, ["3", "4", "6", "7", "8", "9"])
        // One doubtful cell is not reviewed: a lone swap would break the check digit.
        let one = PosteriorDecodeTests.posteriors(truth, ["2:3": oz(0.3, 0.7, 0.0057, oFirst: false)])
        XCTAssertEqual(MRZParser().parse(truth, posteriors: one).corrections.count, 0)
        // Doubt without the prior's backing: a reading of digits with letter rivals stays as read.
        let digits = PosteriorDecodeTests.posteriors(truth, [
            "2:3": oz(0.4, 0.6, 0.0057, oFirst: false), "2:4": oz(0.4, 0.6, 0.0057, oFirst: false),
            "2:6": oz(0.4, 0.6, 0.0057, oFirst: false), "2:7": oz(0.4, 0.6, 0.0057, oFirst: false),
        ])
        let kept = MRZParser().parse(truth, posteriors: digits)
        XCTAssertEqual(kept.lines, truth)
        XCTAssertTrue(kept.valid)
    }
    /// 100_pass-polx as read: issuing state `ROL` (R 0.996, P 0.0044, measured on the specimen), the
    /// nationality `POL` read clearly. Alone the P has 1/230 of R's likelihood, below the 1/10 the
    /// out-of-list prior and the 100:1 margin ask; given the nationality (a passport's issuing state
    /// and nationality agree in 17 of 19 real passports) `POL` wins by about 10,000:1.
    func testIssuingStateAgreesWithTheNationalityOfAPassport() {
        let rol: [[(Character, Double)]] = [[("R", 0.996), ("P", 0.00438), ("B", 3.59e-7), ("F", 2.27e-7)],
                                            [("O", 1), ("D", 0.000312), ("0", 1.64e-5)], [("L", 1)]]
        guard case .undecided = decide("ROL", rol) else { return XCTFail("without the partner ROL stays") }
        XCTAssertEqual(CountryCodes.decide(read: Array("ROL".utf8), candidates: rol.map(cands), margin: MRZDecoder.margin,
                                           partner: Array("POL".utf8), agreement: CountryCodes.passportAgreement),
                       .replace(Array("POL".utf8)))
        // A partner that is not the nearby code does not pull the reading anywhere.
        guard case .undecided = CountryCodes.decide(read: Array("ROL".utf8), candidates: rol.map(cands), margin: MRZDecoder.margin,
                                                    partner: Array("UTO".utf8), agreement: CountryCodes.passportAgreement) else {
            return XCTFail("a partner UTO must not turn ROL into a listed code")
        }
        // Part E (stateless, refugee) nationalities carry no agreement prior.
        guard case .undecided = CountryCodes.decide(read: Array("XX8".utf8),
                                                    candidates: [[("X", 1)], [("X", 1)], [("8", 0.99), ("B", 0.003)]].map(cands),
                                                    margin: MRZDecoder.margin, partner: Array("XXB".utf8), agreement: 0.9) else {
            return XCTFail("XXB is Part E")
        }
        let read = ["P<ROLKOWALSKA<KWIATKOWSKA<<JOANNA<<<<<<<<<<<", "AA00000000POL6002084F1412314<<<<<<<<<<<<<<<4"]
        let post = PosteriorDecodeTests.posteriors(read, ["1:3": [MRZCandidate("R", 0.996), MRZCandidate("P", 0.00438)]])
        let r = MRZParser().parse(read, posteriors: post)
        XCTAssertEqual(r.fields.issuingState, "POL")
        XCTAssertEqual(r.corrections.map { "\($0.line):\($0.column) \($0.from)→\($0.to) \($0.source)" }, ["1:3 R→P code_list"])
    }

    /// specimen-100426 (c1000, TD1) as read: `SWF` in both fields (posteriors measured): line 1's F
    /// 0.866 / E 0.134 passes the list on its own; line 2's F 0.998 / E 0.00185 does not, but given the
    /// issuing state now `SWE` (agreement 8/13 on cards) it does, in the second round.
    func testNationalityFollowsTheIssuingStateTheListSettled() {
        let read = ["I<SWFWC454060<3138691759<<<<<<", "4607094M2609223SWF<<<<<<<<<<<9", "JOHANSSON<<ELENA<<<<<<<<<<<<<<"]
        let post = PosteriorDecodeTests.posteriors(read, ["1:5": [MRZCandidate("F", 0.866), MRZCandidate("E", 0.134)],
                                                          "2:18": [MRZCandidate("F", 0.998), MRZCandidate("E", 0.00185)]])
        let r = MRZParser().parse(read, posteriors: post)
        XCTAssertEqual(r.lines, ["I<SWEWC454060<3138691759<<<<<<", "4607094M2609223SWE<<<<<<<<<<<9", "JOHANSSON<<ELENA<<<<<<<<<<<<<<"])
        XCTAssertTrue(r.valid, "\(r.errors)")
    }
    /// c1000's specimen-100473 as read: the personal number `…1988<<<` read `…1988KKK`, every check
    /// digit holding (K = 20 ≡ `<` = 0 modulo 10). Posteriors measured: K 0.683/0.957/0.791 against
    /// `<` 0.317/0.0425/0.209 — 183:1 for the letters, but a field filled to its last cell is 1 in
    /// 233 and three letters after a digit cost 15³ × 20: the padding wins. specimen-100951's K at
    /// 0.999 against `<` 2·10⁻⁴ in each cell (4·10¹¹:1) stays as read.
    func testKRunClosingTheOptionalDataIsPadding() {
        let read = ["P<XXAMONTGOMERY<WILLIAMSON<<BJORN<<<<<<<<<<<", "ZD72899252XXA5609017F261102243737671988KKK34"]
        let truth = ["P<XXAMONTGOMERY<WILLIAMSON<<BJORN<<<<<<<<<<<", "ZD72899252XXA5609017F261102243737671988<<<34"]
        let post = PosteriorDecodeTests.posteriors(read, [
            "2:40": [MRZCandidate("K", 0.683), MRZCandidate("<", 0.317), MRZCandidate("C", 0.000539)],
            "2:41": [MRZCandidate("K", 0.957), MRZCandidate("<", 0.0425), MRZCandidate("C", 0.000189)],
            "2:42": [MRZCandidate("K", 0.791), MRZCandidate("<", 0.209), MRZCandidate("C", 0.000474)],
        ])
        XCTAssertTrue(MRZParser().parse(read).valid, "K and < weigh the same: the check digits hold either way")
        let r = MRZParser().parse(read, posteriors: post)
        XCTAssertEqual(r.lines, truth)
        XCTAssertTrue(r.valid, "\(r.errors)")
        XCTAssertEqual(r.corrections.map { "\($0.column) \($0.source)" }, ["40 filler_padding", "41 filler_padding", "42 filler_padding"])
        // Confident K's stay.
        let sure = PosteriorDecodeTests.posteriors(read, [
            "2:40": [MRZCandidate("K", 0.999), MRZCandidate("<", 0.000239)], "2:41": [MRZCandidate("K", 1), MRZCandidate("<", 4.69e-5)],
            "2:42": [MRZCandidate("K", 0.999), MRZCandidate("<", 0.000216)],
        ])
        XCTAssertEqual(MRZParser().parse(read, posteriors: sure).lines, read)
        // A K run that does not reach the field's end (`…1988KKK<`) is not padding by this rule.
        let inner = ["P<XXAMONTGOMERY<WILLIAMSON<<BJORN<<<<<<<<<<<", "ZD72899252XXA5609017F26110224373767198KKK<34"]
        let innerPost = PosteriorDecodeTests.posteriors(inner, [
            "2:39": [MRZCandidate("K", 0.683), MRZCandidate("<", 0.317)], "2:40": [MRZCandidate("K", 0.957), MRZCandidate("<", 0.0425)],
            "2:41": [MRZCandidate("K", 0.791), MRZCandidate("<", 0.209)],
        ])
        XCTAssertFalse(MRZParser().parse(inner, posteriors: innerPost).corrections.contains { $0.source == "filler_padding" })
    }
}
