import Foundation
import XCTest

/// Loading the seed fixtures and comparing JSON documents independently of IDVCore's own types.
enum PayloadTestSupport {
    /// The text of `Fixtures/<name>` (copied verbatim from the seeds, see Fixtures/SOURCES.md).
    static func fixture(_ name: String) throws -> String {
        let base = (name as NSString).deletingPathExtension
        let ext = (name as NSString).pathExtension
        let url = try XCTUnwrap(Bundle.module.url(forResource: base, withExtension: ext, subdirectory: "Fixtures"),
                                "fixture \(name) missing from the test bundle")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// Removes `// …` line comments and `/* … */` block comments outside string literals (the seed-001
    /// examples carry the seed author's comments).
    static func stripComments(_ text: String) -> String {
        var out = ""
        var chars = Array(text)[...]
        var inString = false
        while let c = chars.first {
            chars = chars.dropFirst()
            if inString {
                out.append(c)
                if c == "\\", let next = chars.first {
                    out.append(next)
                    chars = chars.dropFirst()
                } else if c == "\"" {
                    inString = false
                }
            } else if c == "\"" {
                inString = true
                out.append(c)
            } else if c == "/", chars.first == "/" {
                while let d = chars.first, d != "\n" { chars = chars.dropFirst() }
            } else if c == "/", chars.first == "*" {
                chars = chars.dropFirst()
                while !chars.isEmpty, !(chars.first == "*" && chars.dropFirst().first == "/") { chars = chars.dropFirst() }
                chars = chars.dropFirst(2)
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// Parses JSON text with Foundation's JSONSerialization (not IDVCore's decoder).
    static func parse(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// Recursive equality of two JSONSerialization trees: objects by key set and values, arrays in
    /// order, numbers by value (92 == 92.0), booleans distinct from numbers, null distinct from absent.
    /// Returns the path of the first difference, or nil when equal.
    static func difference(_ a: Any, _ b: Any, path: String = "$") -> String? {
        switch (a, b) {
        case let (x as [String: Any], y as [String: Any]):
            let keys = Set(x.keys).symmetricDifference(y.keys)
            if let key = keys.sorted().first { return "\(path).\(key) present on one side only" }
            for key in x.keys.sorted() {
                if let diff = difference(x[key]!, y[key]!, path: "\(path).\(key)") { return diff }
            }
            return nil
        case let (x as [Any], y as [Any]):
            guard x.count == y.count else { return "\(path): array lengths \(x.count) vs \(y.count)" }
            for (i, pair) in zip(x, y).enumerated() {
                if let diff = difference(pair.0, pair.1, path: "\(path)[\(i)]") { return diff }
            }
            return nil
        case (is NSNull, is NSNull):
            return nil
        case let (x as String, y as String):
            return x == y ? nil : "\(path): strings differ"
        case let (x as NSNumber, y as NSNumber):
            guard isBool(x) == isBool(y) else { return "\(path): bool vs number" }
            return x.doubleValue == y.doubleValue ? nil : "\(path): \(x) vs \(y)"
        default:
            return "\(path): kinds differ (\(type(of: a)) vs \(type(of: b)))"
        }
    }

    /// JSONSerialization yields booleans as NSNumber with objCType "c" (Linux and Darwin).
    static func isBool(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    /// Asserts that two JSON texts are the same document.
    static func assertSameJSON(_ lhs: String, _ rhs: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let diff = difference(try parse(lhs), try parse(rhs))
        XCTAssertNil(diff, "JSON documents differ at \(diff ?? "")", file: file, line: line)
    }
}
