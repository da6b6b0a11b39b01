import Foundation

/// Why the app stops early.
struct AppExit: Error { let code: Int32; let message: String }

/// Where a screen's answer comes from.
protocol AnswerSource: AnyObject {
    /// The answer for `screen` (the line after `screen:` in a script, or what the user typed).
    func answer(for screen: String, hint: String) throws(AppExit) -> String
}

/// Interactive: prints the choices and reads one line from stdin (EOF ends the app).
final class InteractiveAnswers: AnswerSource {
    func answer(for screen: String, hint: String) throws(AppExit) -> String {
        print("  [\(hint)]")
        print("\(screen)> ", terminator: "")
        fflush(nil)
        guard let line = readLine() else { throw AppExit(code: 0, message: "input ended") }
        return line.trimmingCharacters(in: .whitespaces)
    }
}

/// `--script FILE`: one answer per line as `screen-name: answer`, in the order the screens appear.
/// Blank lines and lines starting with `#` are skipped; `${NAME}` is replaced by the environment
/// variable NAME (empty → error). A line for another screen than the one shown stops the app (exit
/// 3) so a script can never answer the wrong question; so does running out of lines.
/// A line starting with `?` (`? selfie-start: capture DIR`) is optional: it answers its screen
/// when the app shows that screen at that point, and is passed over otherwise — for a screen the
/// server may or may not show again, such as a retake the policy asks for (1066, 1071).
final class ScriptAnswers: AnswerSource {
    private var lines: [(number: Int, screen: String, answer: String, optional: Bool)] = []
    private var index = 0
    let path: String

    init(path: String) throws(AppExit) {
        self.path = path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw AppExit(code: 2, message: "cannot read script \(path)") }
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let optional = line.hasPrefix("?")
            if optional { line = line.dropFirst().trimmingCharacters(in: .whitespaces) }
            guard let colon = line.firstIndex(of: ":") else { throw AppExit(code: 2, message: "\(path):\(i + 1): expected 'screen: answer'") }
            let screen = line[..<colon].trimmingCharacters(in: .whitespaces)
            let answer = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            lines.append((i + 1, screen, try Self.expand(answer, at: "\(path):\(i + 1)"), optional))
        }
    }

    static func expand(_ s: String, at location: String) throws(AppExit) -> String {
        var out = ""
        var rest = Substring(s)
        while let start = rest.range(of: "${") {
            out += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else { throw AppExit(code: 2, message: "\(location): unclosed ${") }
            let name = String(rest[start.upperBound..<end])
            guard let v = ProcessInfo.processInfo.environment[name], !v.isEmpty else {
                throw AppExit(code: 2, message: "\(location): environment variable \(name) is not set")
            }
            out += v
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }

    func answer(for screen: String, hint: String) throws(AppExit) -> String {
        while index < lines.count, lines[index].optional, lines[index].screen != screen { index += 1 }
        guard index < lines.count else { throw AppExit(code: 3, message: "script ended, but screen \(screen) waits for an answer") }
        let l = lines[index]
        guard l.screen == screen else {
            throw AppExit(code: 3, message: "\(path):\(l.number) answers screen '\(l.screen)', but the app shows '\(screen)'")
        }
        index += 1
        // Secrets (passwords, the one-time activation code) are echoed masked.
        // (`cancel` on the opt-in/opt-out password dialog is its Cancel button: no password can be "cancel".)
        let secret = (screen.contains("password") || screen.contains("activation-code")) && !(screen == "reauth-password" && l.answer == "cancel")
        print("\(screen)> \(secret ? String(repeating: "*", count: l.answer.count) : l.answer)")
        return l.answer
    }
}

/// Screen output, flushed at once: a header per screen (`── name ── Title`), the screen's texts
/// (indented), its buttons (`[Title]`, and the busy title a pressed button takes, e.g.
/// `[Initiating...]`), alerts (`── alert ── Title`, the message, the buttons), an error banner
/// (`error: …`) and `key: value` facts (the payload's data, for people and for scripts).
final class Terminal: @unchecked Sendable {
    // @unchecked: no state of its own; it writes to stdout, which serialises the lines.
    func screen(_ name: String, _ title: String) {
        print("\n── \(name) ── \(title)")
        fflush(nil)
    }
    func fact(_ key: String, _ value: String) {
        print("  \(key): \(value)")
        fflush(nil)
    }
    /// A screen's text (each line indented).
    func text(_ s: String) {
        for l in s.split(separator: "\n", omittingEmptySubsequences: false) { print(l.isEmpty ? "" : "  \(l)") }
        fflush(nil)
    }
    /// The screen's buttons, in order (a disabled one in parentheses).
    func buttons(_ titles: [String], disabled: Set<String> = []) {
        print("  " + titles.map { disabled.contains($0) ? "(\($0))" : "[\($0)]" }.joined(separator: " "))
        fflush(nil)
    }
    /// A pressed button's busy title (the codelabs' "…ing…" state), e.g. `[Initiating...]`.
    func busy(_ title: String) {
        print("  [\(title)]")
        fflush(nil)
    }
    /// The screen's error banner (the codelabs' `showError(_:)`): shown where the failure happened.
    func error(_ message: String) {
        print("  error: \(message)")
        fflush(nil)
    }
    /// An alert (the codelabs' `UIAlertController`): title, message, its buttons.
    func alert(_ title: String, _ message: String, buttons: [String]) {
        print("\n── alert ── \(title)")
        text(message)
        self.buttons(buttons)
    }
    func line(_ s: String) {
        print(s)
        fflush(nil)
    }
}
