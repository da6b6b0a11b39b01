import Foundation
import IDVKit

// The sample app: the codelabs' screens as a terminal app (screens / coordinator / service).
let usage = """
usage: idv --server URL [--script FILE] [--out DIR] [--timeout SECONDS] [--lda-key FILE] [--chip-dir DIR] [--flash-simulator IDVD]
  Runs the codelabs' flows against an idvd server: check user, activation code, document and selfie
  screens, consent, password, and the dashboard (KYC, additional document scan, biometric
  authentication, template status, opt-in, opt-out, log off).
  Interactive by default (one answer per prompt on stdin). --script FILE answers the screens from
  FILE: one 'screen-name: answer' per line, in order; '#' comments; ${VAR} = environment variable.
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
  Screens: check-user, activation-code, set-password, verify-password, reauth-password, lda-consent, lda-presence,
  document-start (scan FRONT [BACK] | cancel), document-details (confirm | rescan),
  selfie-start (capture FOLDER [back] [no-flash] | cancel), selfie-confirmation (an offered key | close),
  consent (approve | reject | close), optin-frame (approve | recapture | cancel),
  dashboard (kyc R | docscan R | biometric-auth R | template-status | optin | optout | logoff | quit).
  Each finished flow prints 'RESULT flow=… event=… error=… status=… verdict=…'; a summary ends the run.
  Images from the server are saved under --out (default: a new temporary folder).
  Exit: 0 after 'dashboard: quit' or end of input, 1 SDK/server failure, 2 usage, 3 script mismatch.
"""

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
delegates.onEvent = { coordinator.handle($0) }
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
let callbacks = DispatchQueue(label: "idv.screens")
let e = service.initialize(server, timeout: timeout, queue: callbacks)
if !e.isSuccess { exit(1) }
exit(coordinator.wait())
