import Foundation
import IDVCore

// The engine's part of the replay check (Workflows/Presence.swift): the digests of a selfie's
// frames are looked up before the transaction (with the analysis), looked up again inside it (a
// concurrent upload of the same frames may have committed meanwhile: the answer is then measured
// again), recorded by the flow's `.recordCaptureDigests` effect in the same transaction, and
// purged by the expiry sweep (IDVOperations Maintenance.swift).

extension FlowEngine {
    /// The store's digest table, when the replay check is on.
    var captureDigestStore: (any CaptureDigestStore)? {
        settings.workflow.presence.replaySeconds > 0 ? store : nil
    }

    /// The digests of `frames` and how many of them earlier uploads left in the store (now).
    func captureReplay(_ frames: [Data]) throws -> (digests: [String], known: Int) {
        guard let digests = captureDigestStore else { return ([], 0) }
        let d = CaptureDigests.of(frames, crypto: crypto)
        return (d, try digests.knownCaptureDigests(d, now: clock.now()))
    }

    /// Whether the store still holds as many of the evidence's frame digests as when it was measured
    /// (inside the answer's transaction).
    func captureReplayHolds(_ e: Evidence, now: Int) throws -> Bool {
        guard !e.captureDigests.isEmpty, let digests = captureDigestStore else { return true }
        return try digests.knownCaptureDigests(e.captureDigests, now: now) == e.replayedFrames
    }

    /// Applies ``Effect/recordCaptureDigests(_:expiresAt:)``.
    func recordCaptureDigests(_ d: [String], now: Int, expiresAt: Int) throws {
        try captureDigestStore?.recordCaptureDigests(d, seenAt: now, expiresAt: expiresAt)
    }
}
