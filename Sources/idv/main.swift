import Foundation
import IDVKit

// The sample app: the codelabs' screens as a terminal app (screens / coordinator / service).
let usage = """
usage: idv --server URL [--script FILE] [--out DIR] [--timeout SECONDS] [--lda-key FILE] [--chip-dir DIR | --chip-reader pcsc[:NAME]]
       [--flash-simulator IDVD]
       idv chip read (--mrz LINE1 LINE2 [LINE3] | --can NUMBER) --out DIR [--reader NAME] [--aa-challenge HEX] …
       idv chip readers      (idv chip --help: reading a passport chip over PC/SC)
  Runs the codelabs' flows against an idvd server: check user, activation code, document and selfie
  screens, consent, password, and the dashboard (KYC, additional document scan, biometric
  authentication, template status, opt-in, opt-out, log off).
  Interactive by default (one answer per prompt on stdin). --script FILE answers the screens from
  FILE: one 'screen-name: answer' per line, in order; '#' comments; ${VAR} = environment variable;
  a line starting with '?' is optional (used only if the app shows its screen then, e.g. a retake).
  --lda-key FILE keeps this install's Ed25519 device key in FILE (created with mode 0600; a file with
  wider permissions is refused) and enables LDA: the device is registered, 'lda-consent: yes'
  enrols it, and logins / opt-in / opt-out re-authentication ask 'lda-presence: y|n' instead of the
  password ('n', or LDA unavailable, falls back to the password screen).
  --chip-dir DIR reads an eMRTD chip's files from DIR (EF_SOD.bin, EF_COM.bin, DG1.bin, DG2.bin … as
  'idvd specimen --chip' writes them) after every document capture and sends them beside the pages:
  the server verifies the chip (passive authentication), and the scan result shows the 'nfc' row.
  --flash-simulator IDVD: when the server asks the screen to flash a colour sequence during the selfie
  (presence), the frame folder is rendered as a phone camera would record it under that light by
  'IDVD presence simulate' (a terminal has no screen facing a face); without it the app cannot flash,
  and the server asks again with its fallback (the head-movement challenge). 'no-flash' after the
  folder declines the flashing as a person sensitive to it would.
  --chip-reader pcsc[:NAME] reads the chip on a PC/SC reader (the first with a card, or the one whose name
  contains NAME) after every document capture: the 'chip-access' screen asks for its key (mrz LINE1 LINE2
  [LINE3] | can NUMBER | skip); PACE or BAC, Chip Authentication, and Active Authentication on the server's
  challenge, so the server can report the chip genuine. A wrong MRZ/CAN is said and the screen asked again.
  Screens (the codelabs' own, with their texts): check-user, activation-code, chip-access, set-password,
  verify-password, lda-consent, lda-presence,
  dashboard (the side menu: kyc [R] | docscan [R] | biometric-auth [R] | optin | optout | template-status | logoff | quit),
  the entry screens kyc, docscan, biometric-auth, optin, optout (start | back; the last three check the
  biometric template first and enable start only as the codelabs do),
  reauth-password (the opt-in/opt-out password dialog: PASSWORD | cancel),
  document-start (scan FRONT [BACK] | cancel), document-details (confirm | recapture | close),
  selfie-start (capture FOLDER [back] [no-flash] | cancel), selfie-confirmation (an offered key | true | close),
  consent (approve | reject | close), optin-frame (approve | recapture | cancel).
  A screen shown again says why (error: …): a refused answer, an unusable page or capture, a lost network.
  Each finished flow prints 'RESULT flow=… event=… error=… status=… verdict=…'; a summary ends the run.
  Images from the server are saved under --out (default: a new temporary folder).
  Exit: 0 after 'dashboard: quit' or end of input, 1 SDK/server failure, 2 usage, 3 script mismatch.
"""

// `idv chip …`: reading a passport chip over PC/SC (ChipRead.swift), apart from the codelab screens.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "chip" {
    exit(ChipReadCommand.run(Array(CommandLine.arguments.dropFirst(2))))
}

var opts: [String: String] = [:]
var argv = Array(CommandLine.arguments.dropFirst())
while !argv.isEmpty {
    let a = argv.removeFirst()
    if a == "-h" || a == "--help" { print(usage); exit(0) }
    guard a.hasPrefix("--"), !argv.isEmpty else { FileHandle.standardError.write(Data("idv: bad argument \(a)\n\(usage)\n".utf8)); exit(2) }
    opts[String(a.dropFirst(2))] = argv.removeFirst()
}
guard let server = opts["server"].flatMap(URL.init(string:)) else {
    FileHandle.standardError.write(Data("idv: --server URL is required\n\(usage)\n".utf8))
    exit(2)
}
let timeout = Double(opts["timeout"] ?? "60") ?? 60
let outDir = opts["out"].map { URL(fileURLWithPath: $0) }
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("idv-\(ProcessInfo.processInfo.processIdentifier)")

let answers: AnswerSource
if let script = opts["script"] {
    do { answers = try ScriptAnswers(path: script) } catch {
        FileHandle.standardError.write(Data("idv: \(error.message)\n".utf8))
        exit(error.code)
    }
} else {
    answers = InteractiveAnswers()
}

let ui = Terminal()
ui.line("idv \(IDVKit.version) — the OpenIDV sample app; server \(server.absoluteString)")
let rdna = RDNA.shared
var flashSimulator: URL?
if let path = opts["flash-simulator"] {
    guard FileManager.default.isExecutableFile(atPath: path) else {
        FileHandle.standardError.write(Data("idv: --flash-simulator \(path) is not an executable (the idvd binary)\n".utf8))
        exit(2)
    }
    flashSimulator = URL(fileURLWithPath: path)
}
let service = IDVService(rdna: rdna, ui: ui, flashSimulator: flashSimulator)
let coordinator = Coordinator(service: service, ui: ui, answers: answers, outDir: outDir)
let delegates = DelegateManager()
delegates.onEvent = { coordinator.handle($0, $1) }
delegates.register(with: rdna)
if let keyPath = opts["lda-key"] {
    let prompt = PresencePrompt(ui: ui, answers: answers, coordinator: coordinator)
    rdna.setLDAProvider(PlatformLDAProvider(keyFile: URL(fileURLWithPath: keyPath)) { prompt.ask($0) })
}
if let chipDir = opts["chip-dir"] {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: chipDir, isDirectory: &isDir), isDir.boolValue else {
        FileHandle.standardError.write(Data("idv: --chip-dir \(chipDir) is not a folder\n".utf8))
        exit(2)
    }
    rdna.setChipReaderProvider(FileChipReader(folder: URL(fileURLWithPath: chipDir)))
}
if let spec = opts["chip-reader"] {
    guard opts["chip-dir"] == nil else {
        FileHandle.standardError.write(Data("idv: give --chip-dir or --chip-reader, not both\n".utf8))
        exit(2)
    }
    guard let reader = PCSCChipReader(spec: spec, ui: ui, answers: answers) else {
        FileHandle.standardError.write(Data("idv: --chip-reader takes pcsc or pcsc:NAME\n".utf8))
        exit(2)
    }
    rdna.setChipReaderProvider(reader)
}
let callbacks = DispatchQueue(label: "idv.screens")
let e = service.initialize(server, timeout: timeout, queue: callbacks)
if !e.isSuccess { exit(1) }
exit(coordinator.wait())
