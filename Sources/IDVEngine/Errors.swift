/// Server-internal failures (never shown to clients beyond code 1030).
public enum IDVServerError: Error, CustomStringConvertible {
    case internalFailure(String)
    case storage(String)
    case configuration(String)

    public var description: String {
        switch self {
        case let .internalFailure(m): return "internal failure: \(m)"
        case let .storage(m): return "storage: \(m)"
        case let .configuration(m): return "configuration: \(m)"
        }
    }
}
