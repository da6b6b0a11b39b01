import Foundation
import IDVCore
import IDVCrypto
import IDVEngine
import IDVRuntime
import IDVOperations

/// `idvd admin rp-client create|list|revoke` and `idvd admin review list|show|decide` (issue #23;
/// IDVEngine/RelyingParty). Output is JSON; secrets are printed once, by `create`.
enum RPAdminCommand {
    static let usage = """
      rp-client create --name N --scope read,links,review,erase
                                                          a relying-party API client; prints client_id and the secret ONCE
                                                          (send Authorization: Bearer <client_id>.<secret>); audited
      rp-client list                                      every client (id, name, scopes, created, revoked; no secrets)
      rp-client revoke <client_id>                        its credentials stop working at once; audited
      review list [--state pending|decided|all]           review cases the policy opened (review.* settings)
      review show <case_id>                               one case: triggers, the verification's evidence; with --images,
                                                          the images held for it (base64 JPEG)
      review decide <case_id> --decision approve|reject --reason TEXT
                                                          decide it as the operator (audited, reviewer "admin"): the
                                                          verification's outcome; held images released by retention
    """

    static func rpClient(_ pos: [String], _ opts: [String: String], admin: Admin) throws -> Int32 {
        guard let verb = pos.first else { throw CLIError("rp-client needs create, list or revoke") }
        switch verb {
        case "create":
            guard pos.count == 1 else { throw CLIError("rp-client create takes --name and --scope, no other arguments") }
            guard let name = opts["name"] else { throw CLIError("rp-client create needs --name N") }
            guard let scope = opts["scope"] else { throw CLIError("rp-client create needs --scope read,links,review,erase (one or more)") }
            try CLI.printJSON(admin.createClient(name: name, scopes: RPScope.parse(scope)))
        case "list":
            guard pos.count == 1 else { throw CLIError("rp-client list takes no arguments") }
            try CLI.printJSON(admin.listClients())
        case "revoke":
            guard pos.count == 2 else { throw CLIError("rp-client revoke needs exactly one client id") }
            try CLI.printJSON(admin.revokeClient(pos[1]))
        default:
            throw CLIError("unknown rp-client subcommand '\(verb)' (create, list, revoke)")
        }
        return 0
    }

    static func review(_ pos: [String], _ opts: [String: String], engine: FlowEngine, config: ServerConfig) throws -> Int32 {
        guard let verb = pos.first else { throw CLIError("review needs list, show or decide") }
        let api = RelyingPartyAPI(engine: engine, config: config)
        switch verb {
        case "list":
            guard pos.count == 1 else { throw CLIError("review list takes only --state") }
            let pending: Bool?
            switch opts["state"] ?? "pending" {
            case "pending": pending = true
            case "decided": pending = false
            case "all": pending = nil
            default: throw CLIError("--state must be pending, decided or all")
            }
            try CLI.printJSON(api.reviewCases(pending: pending, RPListQuery(limit: 100)))
        case "show":
            guard pos.count == 2 else { throw CLIError("review show needs exactly one case id") }
            var view = try api.reviewCaseView(pos[1])
            if opts["images"] == nil { view.images = view.images.mapValues { "\($0.count) base64 characters (--images prints them)" } }
            try CLI.printJSON(view)
        case "decide":
            guard pos.count == 2 else { throw CLIError("review decide needs exactly one case id") }
            guard let d = opts["decision"].flatMap(ReviewDecision.init(rawValue:)) else { throw CLIError("--decision must be approve or reject") }
            guard let reason = opts["reason"] else { throw CLIError("review decide needs --reason TEXT") }
            try CLI.printJSON(api.decide(pos[1], RPReviewDecisionRequest(decision: d, reason: reason), reviewer: "admin",
                                         requestID: "admin-" + Sodium().randomID(bytes: 8)))
        default:
            throw CLIError("unknown review subcommand '\(verb)' (list, show, decide)")
        }
        return 0
    }
}
