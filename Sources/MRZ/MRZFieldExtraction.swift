extension MRZParser {
    /// Text of `range` on `line`, as displayed (non-ASCII characters kept).
    static func text(_ display: [[Character]], _ line: Int, _ range: Range<Int>) -> String {
        String(display[line][range])
    }

    static func trimFiller(_ s: String) -> String {
        var s = Substring(s)
        while s.last == "<" { s = s.dropLast() }
        return String(s)
    }

    /// `<` runs → single spaces, outer fillers dropped.
    static func words(_ s: Substring) -> String {
        s.split(separator: "<", omittingEmptySubsequences: true).joined(separator: " ")
    }

    func extractFields(format: MRZFormat, layout: Layout, rows: [[UInt8]], display: [[Character]],
                       into fields: inout MRZFields, errors: inout [String], warnings: inout [String]) {
        var raw: [String: String] = [:]
        for f in layout.fields { raw[f.name, default: ""] += Self.text(display, f.line, f.range) }
        fields.raw = raw

        // Document code and type (Doc 9303-3 §4.2 and Parts 4–7).
        let code = Self.trimFiller(raw["document_code"] ?? "")
        fields.documentCode = code
        switch code.first {
        case "P": fields.documentType = "passport"
        case "V": fields.documentType = "visa"
        case "I", "A", "C": fields.documentType = "identity_card"
        default:
            fields.documentType = "unknown"
            warnings.append("document code '\(code)' does not start with P, V, I, A or C")
        }

        // Codes (Doc 9303-3 §5).
        fields.issuingState = Self.trimFiller(raw["issuing_state"] ?? "")
        fields.issuingStateKnown = CountryCodes.isKnown(fields.issuingState)
        if !fields.issuingStateKnown { warnings.append("issuing_state '\(fields.issuingState)' is not an ISO 3166-1 alpha-3 or ICAO code") }
        if format == .frenchNationalID {
            fields.nationality = "FRA"        // implied by the card; not in its MRZ
        } else {
            fields.nationality = Self.trimFiller(raw["nationality"] ?? "")
        }
        fields.nationalityKnown = CountryCodes.isKnown(fields.nationality)
        if !fields.nationalityKnown { warnings.append("nationality '\(fields.nationality)' is not an ISO 3166-1 alpha-3 or ICAO code") }

        // Names (Doc 9303-3 §4.6): primary<<secondary, components separated by '<'.
        if format == .frenchNationalID {
            let sur = raw["surname"] ?? "", given = raw["given_names"] ?? ""
            fields.surname = Self.words(Substring(sur))
            fields.givenNames = Self.words(Substring(given))
            fields.nameTruncated = sur.last.map { $0 != "<" } ?? false || given.last.map { $0 != "<" } ?? false
        } else {
            let name = raw["name"] ?? ""
            fields.nameTruncated = name.last.map { $0 != "<" } ?? false
            let trimmed = Self.trimFiller(name)
            if let sep = trimmed.range(of: "<<") {
                fields.surname = Self.words(trimmed[..<sep.lowerBound])
                let secondary = trimmed[sep.upperBound...]
                fields.givenNames = Self.words(secondary)
                if secondary.contains("<<") {
                    warnings.append("name: the secondary identifier holds a double filler '<<' (a filler misread as a letter?)")
                }
            } else {
                fields.surname = Self.words(Substring(trimmed))
            }
            if trimmed.first == "<" { warnings.append("name: the primary identifier starts with a filler") }
        }
        if fields.nameTruncated { warnings.append("name fills the whole field and may be truncated") }

        // Document number (with a TD1/TD2 long number's overflow part).
        fields.documentNumber = Self.trimFiller(raw["document_number"] ?? "")
        fields.longDocumentNumber = layout.fields.filter { $0.name == "document_number" }.count > 1

        // Dates (Doc 9303-3 §4.8).
        let birthRaw = raw["birth_date"] ?? ""
        let birth = resolveDate(birthRaw, expiry: false)
        fields.birthDate = birth.iso
        if let e = birth.error { errors.append("birth_date '\(birthRaw)': \(e)") }
        if let w = birth.warning { warnings.append("birth_date '\(birthRaw)': \(w)") }
        if let expiryRaw = raw["expiry_date"] {
            let expiry = resolveDate(expiryRaw, expiry: true)
            fields.expiryDate = expiry.iso
            if let e = expiry.error { errors.append("expiry_date '\(expiryRaw)': \(e)") }
            if let w = expiry.warning { warnings.append("expiry_date '\(expiryRaw)': \(w)") }
            if let y = expiry.ymd, expiry.error == nil {
                fields.expired = (y.0, y.1, y.2) < (reference.year, reference.month, reference.day)
            }
        }

        // Sex (Doc 9303-3 §4.7: M, F, or < for unspecified).
        switch raw["sex"] ?? "" {
        case "M": fields.sex = "M"
        case "F": fields.sex = "F"
        case "<", "X": fields.sex = "X"
        case let s: fields.sex = s
        }

        fields.optionalData = Self.trimFiller(raw["optional_data"] ?? "")
        if format == .td1 { fields.optionalData2 = Self.trimFiller(raw["optional_data_2"] ?? "") }
    }

    struct ResolvedDate {
        var iso: String?
        var ymd: (Int, Int, Int)?
        var error: String?
        var warning: String?
    }

    /// `YYMMDD` → a full date. Unknown parts are `<<` (Doc 9303-3 §4.8); `00` as day or month is
    /// read as unknown too, with a warning. Birth dates take the latest century not after the reference
    /// date; expiry dates the latest century not beyond reference year + `expiryWindowYears`.
    func resolveDate(_ s: String, expiry: Bool) -> ResolvedDate {
        var out = ResolvedDate()
        let b = Array(s.utf8)
        guard b.count == 6 else { out.error = "not six characters"; return out }
        func pair(_ i: Int) -> Int?? {
            let a = b[i], c = b[i + 1]
            if a == 0x3C && c == 0x3C { return .some(nil) }
            guard (0x30...0x39).contains(a), (0x30...0x39).contains(c) else { return nil }
            return .some(Int(a - 0x30) * 10 + Int(c - 0x30))
        }
        guard let yy = pair(0), var mm = pair(2), var dd = pair(4) else {
            out.error = "not a date (YYMMDD, digits or '<<' for an unknown part)"; return out
        }
        if mm == 0 { mm = nil; out.warning = "month 00 read as unknown" }
        if dd == 0 { dd = nil; out.warning = "day 00 read as unknown" }
        if let m = mm, !(1...12).contains(m) { out.error = "month \(m) does not exist"; return out }
        guard let yy else {
            if expiry { out.warning = "expiry date unknown" }
            return out
        }
        let base = reference.year - reference.year % 100
        var year = base + yy
        if expiry {
            if year > reference.year + options.expiryWindowYears { year -= 100 }
        } else if (year, mm ?? 1, dd ?? 1) > (reference.year, reference.month, reference.day) {
            year -= 100
        }
        if let d = dd {
            let m = mm ?? 1
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
            if mm != nil && !(1...days).contains(d) { out.error = "day \(d) does not exist in \(year)-\(m)"; return out }
            if mm == nil && !(1...31).contains(d) { out.error = "day \(d) does not exist"; return out }
        }
        if expiry && (mm == nil || dd == nil) { out.warning = "expiry date is incomplete" }
        let y4 = String(year), m2 = mm.map { $0 < 10 ? "0\($0)" : "\($0)" }, d2 = dd.map { $0 < 10 ? "0\($0)" : "\($0)" }
        switch (m2, d2) {
        case let (m?, d?): out.iso = "\(y4)-\(m)-\(d)"
        case let (m?, nil): out.iso = "\(y4)-\(m)"
        default: out.iso = y4
        }
        out.ymd = (year, mm ?? 1, dd ?? 1)
        return out
    }
}
