import Foundation
import IDVCore

/// Every subcommand of `idvd`. Add a command by writing its file (an `extension Command` with a
/// `static let`) and listing it here once.
let commands: [Command] = [
    .version,
    .codes,
    .bench,
    .serve,
    .admin,
    .webhook,
    .evidence,
    .openapi,
    .mrz,
    .face,
    .liveness,
    .presence,
    .selfie,
    .specimen,
    .document,
    .chip,
    .ocrb,
]

extension Command {
static let version = Command(name: "version", summary: "print the version of idvd and its libraries") { args in
    if try CLI.noArguments(args, usage: "usage: idvd version\n  Prints the version of idvd and its libraries.", command: "version") { return 0 }
    print("idvd \(OpenIDV.version)")
    return 0
}

static let codes = Command(name: "codes", summary: "print the workflow, challenge-mode and error-code tables as JSON") { args in
    let usage = """
    usage: idvd codes
      Prints the workflow, challenge-mode and error-code tables as JSON: workflows and challenge_modes
      (raw, name), error_codes (long_error_code, short_error_code, name, message).
    """
    if try CLI.noArguments(args, usage: usage, command: "codes") { return 0 }
    struct Row: Encodable { let raw: Int; let name: String }
    struct ErrorRow: Encodable { let long_error_code: Int; let short_error_code: Int; let name: String; let message: String }
    struct Tables: Encodable { let workflows: [Row]; let challenge_modes: [Row]; let error_codes: [ErrorRow] }
    try CLI.printJSON(Tables(
        workflows: IDVWorkflow.allCases.map { Row(raw: $0.rawValue, name: $0.name) },
        challenge_modes: ChallengeOpMode.allCases.map { Row(raw: $0.rawValue, name: $0.name) },
        error_codes: IDVErrorCode.allCases.map {
            ErrorRow(long_error_code: $0.rawValue, short_error_code: $0.category.rawValue, name: "\($0)", message: $0.message)
        }))
    return 0
}
}

func usage() -> String {
    var s = "usage: idvd <command> [arguments]\n\ncommands:\n"
    for c in commands { s += "  " + c.name.padding(toLength: 10, withPad: " ", startingAt: 0) + c.summary + "\n" }
    s += "\nRun 'idvd <command> --help' for a command's options."
    return s
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, !["-h", "--help", "help"].contains(name) else {
    print(usage())
    exit(arguments.isEmpty ? 2 : 0)
}
guard let command = commands.first(where: { $0.name == name }) else {
    CLI.stderr("idvd: unknown command '\(name)'\n\n" + usage())
    exit(2)
}
do {
    // `idvd <command> <sub> … --help`: the command's own usage, which lists its subcommands, exit 0
    // (admin and bench print the one subcommand's lines themselves).
    let rest = Array(arguments.dropFirst())
    if command.name != "admin", command.name != "bench", rest.count > 1, rest.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
        exit(try command.run(["--help"]))
    }
    exit(try command.run(rest))
} catch let error as CLIError {
    CLI.stderr("idvd \(name): \(error.description)")
    exit(2)
} catch {
    CLI.stderr("idvd \(name): \(error)")
    exit(1)
}
