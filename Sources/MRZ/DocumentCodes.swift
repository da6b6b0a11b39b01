/// The document codes (the MRZ's first two characters, ICAO 9303-3 §4.2.2 "document code") an issuer
/// is known to use. No check digit covers the code (ICAO 9303-3 §4.9), so a misread one — `C<` for
/// `I<`, `PK` for `P<` — passes every check and changes the document type a person relies on. ICAO
/// fixes only the first character (`P` for passports and other TD3 travel documents, 9303-4 §4.2.2
/// note m; `A`, `C` or `I` on TD1 and TD2 cards, 9303-5 §4.2.2 note k, 9303-6; `V` for visas, 9303-7)
/// and leaves the second to the issuing state (never `V` after a card letter, `AI` never, `AC` only
/// on a crew member certificate). A code is *known* for an issuer when it is one every issuer uses
/// (``general``) or one the issuer itself is known to print (``byIssuer``); any other code may be a
/// misreading, which only the printed page can settle.
public enum DocumentCodes {
    /// Codes in use by issuers in general: ICAO 9303's own form for each kind of document, the
    /// kind's letter and a filler (`P<` 9303-4, `I<` 9303-5/-6, `V<` 9303-7, as in every ICAO
    /// example), ICAO's crew member certificate `AC` (9303-5 Appendix A), `ID`, the identity-card
    /// code of many states (the real specimens in ../shared/testdata/mrz-images: AUT, CHE, DEU ("D"),
    /// ESP, ROU, and CMW), and `IR`, the residence-permit card code (the United Kingdom's biometric
    /// residence permit, GOV.UK identity vocabulary `ResidencePermitDetailsClass`; the TD1 residence
    /// permits of several European states; the specimen generator's TD1 codes). A one-cell rival of a
    /// general code (`ID` read `IR`) is still caught by the cells' posteriors
    /// (`DocumentFinding.uncheckedFieldInDoubt`).
    public static let general: Set<String> = ["P<", "I<", "V<", "AC", "ID", "IR"]

    /// Other codes, with the issuers (ICAO 9303-3 §5 codes) known to print them; each entry from a
    /// real specimen (../shared/testdata/mrz-images, PassportEye's test data, MIT): `PA` Latvia
    /// (`0_pass-lva.jpg`), `IA` and `C1` the United States (`100_id-usa.jpg`, `33_id-usa.jpg`), `VC`
    /// Poland (`100_visa-polx.jpg`). Extend it from documents seen, with the source beside each entry.
    public static let byIssuer: [String: Set<String>] = [
        "PA": ["LVA"],
        "IA": ["USA"],
        "C1": ["USA"],
        "VC": ["POL"],
    ]

    /// Whether `code` (two characters, fillers included: `P<`, `ID`; a one-letter code is padded with
    /// a filler) is one issuer `issuingState` is known to use: a ``general`` code, or one ``byIssuer``
    /// lists for it.
    public static func isKnown(_ code: String, issuingState: String) -> Bool {
        let c = code.count == 1 ? code + "<" : code
        return general.contains(c) || byIssuer[c]?.contains(issuingState) == true
    }
}
