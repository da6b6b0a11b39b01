import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations
import IDVWebhooks

/// `idvd admin webhook add|list|remove|deliveries|redeliver` (docs/WEBHOOKS.md).
enum WebhookAdminCommand {
    static let usage = """
      webhook add --url URL [--events T,…]                register a receiver for these event types (default all:
                                                          \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ")));
                                                          https, or http to loopback (webhooks.allow_http); prints the
                                                          signing secret ONCE (kept sealed under templates.key_file)
      webhook list                                        the endpoints (no secrets)
      webhook rotate-secret ID [--overlap S]              a new signing secret, printed ONCE; for S seconds (default
                                                          86400, at most 30 days; 0 = none) deliveries are signed with
                                                          the old secret too, so the receiver switches when it likes
      webhook remove ID                                   forget an endpoint; its pending deliveries end as failed
      webhook deliveries [--limit N] [--state S]          the delivery log, newest first (S: pending, delivered, failed;
                                                          --event ID: one event's rows; attempts, next attempt, last
                                                          status and error; no bodies, no secrets)
      webhook redeliver EVENT_ID                          deliver an event again now (its deliveries become pending)
    """

    static func run(_ pos: [String], opts: [String: String], admin: Admin, config: ServerConfig) throws -> Int32 {
        guard let verb = pos.first else { throw CLIError("webhook needs add, list, rotate-secret ID, remove ID, deliveries or redeliver EVENT_ID") }
        switch verb {
        case "add":
            guard pos.count == 1 else { throw CLIError("webhook add takes --url URL [--events T,…], no other arguments") }
            guard let url = opts["url"] else { throw CLIError("webhook add needs --url URL") }
            guard let events = WebhookEventType.list(opts["events"] ?? "") else {
                throw CLIError("--events must be a comma-separated list of \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            try CLI.printJSON(admin.addWebhook(url: url, events: events, vault: config.openVault()))
        case "list":
            guard pos.count == 1 else { throw CLIError("webhook list takes no arguments") }
            try CLI.printJSON(admin.listWebhooks())
        case "rotate-secret":
            guard pos.count == 2 else { throw CLIError("webhook rotate-secret needs exactly one endpoint id (see webhook list)") }
            guard let overlap = Int(opts["overlap"] ?? "86400"), overlap >= 0 else {
                throw CLIError("--overlap must be a whole number of seconds ≥ 0")
            }
            try CLI.printJSON(admin.rotateWebhookSecret(pos[1], overlapSeconds: overlap, vault: config.openVault()))
        case "remove":
            guard pos.count == 2 else { throw CLIError("webhook remove needs exactly one endpoint id (see webhook list)") }
            try CLI.printJSON(admin.removeWebhook(pos[1]))
        case "deliveries":
            guard pos.count == 1 else { throw CLIError("webhook deliveries takes options only") }
            guard let limit = Int(opts["limit"] ?? "50"), (1...1000).contains(limit) else {
                throw CLIError("--limit must be an integer in 1…1000")
            }
            var state: WebhookDeliveryState?
            if let s = opts["state"] {
                guard let v = WebhookDeliveryState(rawValue: s) else { throw CLIError("--state must be pending, delivered or failed") }
                state = v
            }
            try CLI.printJSON(admin.webhookDeliveries(limit: limit, state: state, eventID: opts["event"]))
        case "redeliver":
            guard pos.count == 2 else { throw CLIError("webhook redeliver needs exactly one event id (see webhook deliveries)") }
            try CLI.printJSON(admin.redeliverWebhookEvent(pos[1]))
        default:
            throw CLIError("unknown webhook subcommand '\(verb)' (add, list, rotate-secret, remove, deliveries, redeliver)")
        }
        return 0
    }
}

extension Command {
    /// `idvd webhook verify`: what a receiver does with a delivery, for operators and receivers' tests.
    static let webhook = Command(name: "webhook", summary: "verify a received webhook delivery's signature (webhook verify)") { args in
        let usage = """
        usage: idvd webhook verify --header 'IDV-Signature value' [--secret-file FILE] [--tolerance S] [--now UNIX] < BODY
          Checks a delivery as a receiver must (docs/WEBHOOKS.md "Signature"): HMAC-SHA256 with the endpoint's
          secret over "<t>." followed by the raw body read from stdin, compared in constant time with each v1=
          value; a timestamp more than S seconds (default \(WebhookSignature.defaultTolerance)) from now is refused.
          The secret comes from --secret-file (mode 0600 recommended) or IDVD_WEBHOOK_SECRET, never the command line.
          Prints {"valid":true,…}; exit 0 when valid, 1 when not, 2 on a usage error.
        """
        try CLI.refuseOptionForSubcommand(args.first, command: "webhook")
        guard args.first == "verify" else { print(usage); return args.isEmpty || args.first == "--help" || args.first == "-h" ? (args.isEmpty ? 2 : 0) : 2 }
        let (opts, pos) = try CLI.parseOptions(Array(args.dropFirst()), valued: ["header", "secret-file", "tolerance", "now"],
                                                   command: "webhook verify")
        guard pos.isEmpty else { throw CLIError("unexpected argument '\(pos[0])' (the secret is read from --secret-file or IDVD_WEBHOOK_SECRET)") }
        guard let header = opts["header"] else { throw CLIError("--header needs the IDV-Signature header's value") }
        let secret: String
        if let f = opts["secret-file"] {
            guard let d = FileManager.default.contents(atPath: f) else { throw CLIError("cannot read \(f)") }
            secret = String(decoding: d, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } else if let s = ProcessInfo.processInfo.environment["IDVD_WEBHOOK_SECRET"] {
            secret = s
        } else {
            throw CLIError("give the endpoint's secret with --secret-file FILE or IDVD_WEBHOOK_SECRET")
        }
        let tolerance = Int(opts["tolerance"] ?? "") ?? WebhookSignature.defaultTolerance
        let now = Int(opts["now"] ?? "") ?? Int(Date().timeIntervalSince1970)
        let body = FileHandle.standardInput.readDataToEndOfFile()
        struct Out: Encodable { let valid: Bool; let reason: String?; let event_id: String?; let type: String? }
        let event = try? JSONDecoder().decode(WebhookEventEnvelope.self, from: body)
        do {
            try WebhookSigner.verify(header: header, body: body, secret: secret, now: now, tolerance: tolerance)
            try CLI.printJSON(Out(valid: true, reason: nil, event_id: event?.id, type: event?.type.rawValue))
            return 0
        } catch let r as WebhookSigner.Refusal {
            try CLI.printJSON(Out(valid: false, reason: r.description, event_id: nil, type: nil))
            return 1
        }
    }
}
