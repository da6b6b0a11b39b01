import Foundation

// Two payload vocabularies of the seeds whose values the server must spell as the seeds show them
// (issue #15): the document type of the document details, and the criterion of the face verdict.

/// `response_data.document_info.document_type` of the document details (seed 002 §6.1 L1884:
/// `"PASSPORT"`; seed 002 L3854 names passports, ID cards and driver's licences). The words for
/// the ICAO 9303 document codes, never the raw code (`"P"`). Unknown strings decode to `.other`.
public enum DocumentKind: OpenStringVocabulary {
    /// `PASSPORT`: a machine-readable passport (ICAO 9303 Part 4, document code `P…`).
    case passport
    /// `ID_CARD`: an official travel or identity document of size TD1/TD2 (Parts 5 and 6, document
    /// codes `I…`, `A…`, `C…`).
    case idCard
    /// `VISA`: a machine-readable visa (Part 7, document code `V…`).
    case visa
    /// Any other string, kept verbatim.
    case other(String)

    /// The string on the wire.
    public var rawValue: String {
        switch self {
        case .passport: return "PASSPORT"
        case .idCard: return "ID_CARD"
        case .visa: return "VISA"
        case let .other(raw): return raw
        }
    }

    /// The named cases (see ``OpenStringVocabulary/knownValues``).
    public static let knownValues: [DocumentKind] = [.passport, .idCard, .visa]

    /// The kind of an MRZ document code (its first character, ICAO 9303 Part 3 §4.2.2 and Parts 4–7):
    /// `P` passport; `I`, `A`, `C` identity/travel cards; `V` visa. Another code (or none) is
    /// `.other` with the code itself, so nothing is lost.
    public init(icaoDocumentCode code: String) {
        switch code.trimmingCharacters(in: .whitespaces).uppercased().first {
        case "P": self = .passport
        case "I", "A", "C": self = .idCard
        case "V": self = .visa
        default: self = .other(code)
        }
    }
}

/// `biometric_result.result_criteria` of a face verdict (seed 002 §6.2 L2606: `"FACE_MATCH"`):
/// what the verdict was decided on — the face comparison, or the liveness check that failed first.
public enum BiometricResultCriteria: OpenStringVocabulary {
    /// `FACE_MATCH`: the capture was live; `display_text` is the face comparison's verdict.
    case faceMatch
    /// `LIVENESS`: the presentation-attack detection rejected the capture (`LIVENESS_FAILED`).
    case liveness
    /// Any other string, kept verbatim.
    case other(String)

    public var rawValue: String {
        switch self {
        case .faceMatch: return "FACE_MATCH"
        case .liveness: return "LIVENESS"
        case let .other(raw): return raw
        }
    }

    public static let knownValues: [BiometricResultCriteria] = [.faceMatch, .liveness]

    /// The criterion of `verdict`: `LIVENESS` for `LIVENESS_FAILED`, `FACE_MATCH` otherwise.
    public init(verdict: BiometricVerdict) {
        self = verdict == .livenessFailed ? .liveness : .faceMatch
    }
}
