import Foundation

/// One `idvd` subcommand (`serve`, `mrz`, `face`, `bench`, …). Each lives in its own file and is
/// listed once in `Commands.all` (main.swift).
struct Command: Sendable {
    let name: String
    let summary: String
    /// Runs with the arguments after the command name; returns the process exit code.
    let run: @Sendable ([String]) throws -> Int32
}

/// A usage or input error: printed to stderr as `idvd: <message>`, exit code 2.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

enum CLI {
    /// Writes a JSON value to stdout, pretty-printed with sorted keys (or compact for `--jsonl`).
    static func printJSON<T: Encodable>(_ value: T, compact: Bool = false) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = compact ? [.sortedKeys, .withoutEscapingSlashes]
                                           : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }

    static func stderr(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Splits `--name value` / `--flag` options from positional arguments.
    /// `flags` names options that take no value, `valued` the options that take one; any other name
    /// is refused as unknown here (exit 2), before a missing value could be blamed for it. `command`
    /// names the command in that message. `valued: nil` accepts any option: for callers that check
    /// the names themselves. With `valued`, a single-dash word (`-x`) is refused as unknown too;
    /// `-h` is `--help` where `flags` has "help".
    /// `takesArguments: false`: a command of options only (a benchmark), which refuses a positional
    /// argument instead of ignoring it.
    static func parseOptions(_ args: [String], flags: Set<String> = [], valued: Set<String>?, takesArguments: Bool = true,
                             command: String) throws -> (options: [String: String], positional: [String]) {
        var options: [String: String] = [:]
        var positional: [String] = []
        var i = 0
        while i < args.count {
            let a = args[i]
            if a.hasPrefix("--") && a.count > 2 {
                let name = String(a.dropFirst(2))
                if let valued {
                    let bare = name.split(separator: "=", maxSplits: 1).first.map(String.init) ?? name
                    guard valued.contains(bare) || flags.contains(bare) else {
                        throw CLIError("unknown option --\(bare)" + (command.isEmpty ? "" : " (see idvd \(command) --help)"))
                    }
                }
                if let eq = name.firstIndex(of: "=") {
                    options[String(name[..<eq])] = String(name[name.index(after: eq)...])
                } else if flags.contains(name) {
                    options[name] = "true"
                } else {
                    guard i + 1 < args.count else { throw CLIError("option --\(name) needs a value") }
                    options[name] = args[i + 1]
                    i += 1
                }
            } else if valued != nil, a == "-h" || a == "-help" {
                // `-h` where a command reads its options here: its --help, when it has one.
                guard flags.contains("help") else { throw CLIError("unknown option -h" + (command.isEmpty ? "" : " (see idvd \(command) --help)")) }
                options["help"] = "true"
            } else if valued != nil, a.count > 1, a.hasPrefix("-"), a.dropFirst().first?.isLetter == true {
                // `-x`: a mistyped option, not a file or a value (`-5` and `-` stay positional).
                throw CLIError("unknown option \(a)" + (command.isEmpty ? "" : " (see idvd \(command) --help)"))
            } else {
                positional.append(a)
            }
            i += 1
        }
        if !takesArguments, let first = positional.first {
            throw CLIError("unexpected argument '\(first)'" + (command.isEmpty ? "" : " (see idvd \(command) --help)"))
        }
        return (options, positional)
    }

    /// A group command's first argument (`idvd document --bogus`) that is an option where a
    /// subcommand belongs: refused as an unknown option rather than as an unknown subcommand.
    static func refuseOptionForSubcommand(_ first: String?, command: String) throws {
        guard let first, first.count > 1, first.hasPrefix("-"), !["-h", "--help"].contains(first) else { return }
        throw CLIError("unknown option \(optionName(first)) (see idvd \(command) --help)")
    }

    /// An option as typed, without any `=value`: `--name`, `-x`.
    static func optionName(_ arg: String) -> String {
        arg.split(separator: "=", maxSplits: 1).first.map(String.init) ?? arg
    }

    /// For commands that take no arguments (`idvd version`, `codes`, `openapi`): `--help` / `-h`
    /// prints `usage` (true: the caller returns 0); any other argument is refused (exit 2).
    static func noArguments(_ args: [String], usage: String, command: String) throws -> Bool {
        guard let first = args.first else { return false }
        if args.contains("--help") || args.contains("-h") { print(usage); return true }
        if first.count > 1, first.hasPrefix("-") { throw CLIError("unknown option \(optionName(first)) (see idvd \(command) --help)") }
        throw CLIError("unexpected argument '\(first)' (idvd \(command) takes no arguments)")
    }
}
