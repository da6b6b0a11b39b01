import Foundation
import IDVCore
@testable import IDVEngine
import IDVRuntime
import IDVOperations
import XCTest

/// The analysis pool's admission (Analysis.swift): slots, one per key/run/user, costs, the memory
/// budget, Retry-After, the snapshot `/healthz` reads and the `/metrics` lines.
final class AnalysisLimiterTests: XCTestCase {
    func limiter(threads: Int = 1, queue: Int = 1, megapixels: Int = 10, budgetMiB: Int = 100, maxMiB: Int = 60) -> AnalysisLimiter {
        var s = AnalysisSettings()
        s.threads = threads
        s.queueLimit = queue
        s.maxRequestMegapixels = megapixels
        s.memoryBudgetMiB = budgetMiB
        s.maxAnalysisMiB = maxMiB
        s.maxRetryAfterSeconds = 7
        return AnalysisLimiter(settings: s)
    }

    func refusal<T>(_ r: Result<T, AnalysisRefusal>) -> AnalysisRefusal? {
        if case let .failure(e) = r { return e }
        return nil
    }

    func testSlotsBeyondThreadsAndQueueAreRefusedWith1100AndOneKeyHoldsOne() throws {
        let l = limiter(threads: 1, queue: 1)
        let a = try l.enqueue(key: "a").get()
        XCTAssertEqual(refusal(l.enqueue(key: "a"))?.error.longErrorCode, 1101, "the same session twice")
        let b = try l.enqueue(key: "b").get()
        XCTAssertTrue(l.snapshot.saturated)
        let busy = try XCTUnwrap(refusal(l.enqueue(key: "c")))
        XCTAssertEqual(busy.error.longErrorCode, 1100)
        XCTAssertTrue((1...7).contains(busy.retryAfterSeconds))
        l.start(a)
        XCTAssertEqual(l.snapshot.running, 1)
        XCTAssertEqual(l.snapshot.queued, 1)
        l.finish(a)
        XCTAssertFalse(l.snapshot.saturated)
        XCTAssertNotNil(try? l.enqueue(key: "a").get(), "a's key is free again once its request is answered")
        l.start(b); l.finish(b)
        let text = l.renderMetrics()
        XCTAssertTrue(text.contains("idvd_analysis_refusals_total{reason=\"queue_full\"} 1"))
        XCTAssertTrue(text.contains("idvd_analysis_refusals_total{reason=\"in_progress\"} 1"))
        XCTAssertTrue(text.contains("idvd_analysis_wait_seconds_count 2"))
    }

    func testCostsOverTheRequestLimitsAre1102AndTheBudgetIs1100UntilReleased() throws {
        let l = limiter(megapixels: 10, budgetMiB: 100, maxMiB: 60)
        XCTAssertThrowsError(try l.admit(cost: AnalysisCost(pixels: 10_000_001, bytes: 1), run: "r", user: "u")) {
            XCTAssertEqual(($0 as? IDVError)?.longErrorCode, 1102)
        }
        XCTAssertThrowsError(try l.admit(cost: AnalysisCost(pixels: 1, bytes: (60 << 20) + 1), run: "r", user: "u")) {
            XCTAssertEqual(($0 as? IDVError)?.longErrorCode, 1102)
        }
        let first = try l.admit(cost: AnalysisCost(pixels: 1_000, bytes: 50 << 20), run: "r1", user: "u1")
        XCTAssertThrowsError(try l.admit(cost: .zero, run: "r1", user: "u9")) { XCTAssertEqual(($0 as? AnalysisRefusal)?.error.longErrorCode, 1101) }
        XCTAssertThrowsError(try l.admit(cost: .zero, run: "r9", user: "u1")) { XCTAssertEqual(($0 as? AnalysisRefusal)?.error.longErrorCode, 1101) }
        let second = try l.admit(cost: AnalysisCost(pixels: 1_000, bytes: 40 << 20), run: "r2", user: "u2")
        XCTAssertThrowsError(try l.admit(cost: AnalysisCost(pixels: 1, bytes: 20 << 20), run: "r3", user: "u3")) {
            let r = $0 as? AnalysisRefusal
            XCTAssertEqual(r?.error.longErrorCode, 1100, "90 MiB reserved of 100: 20 more do not fit")
            XCTAssertGreaterThanOrEqual(r?.retryAfterSeconds ?? 0, 1)
        }
        XCTAssertEqual(l.snapshot.memoryInUseBytes, 90 << 20)
        l.release(first)
        let third = try l.admit(cost: AnalysisCost(pixels: 1, bytes: 20 << 20), run: "r1", user: "u1")
        l.release(second); l.release(third)
        XCTAssertEqual(l.snapshot.memoryInUseBytes, 0)
        let text = l.renderMetrics()
        XCTAssertTrue(text.contains("idvd_analysis_refusals_total{reason=\"too_costly\"} 2"))
        XCTAssertTrue(text.contains("idvd_analysis_refusals_total{reason=\"memory_budget\"} 1"))
        XCTAssertTrue(text.contains("idvd_analysis_duration_seconds_count 3"))
    }

    func testSettingsAreConfigurableByKeyAndEnvironment() throws {
        let c = try ServerConfig.load(file: nil, environment: ["IDVD_ANALYSIS_THREADS": "3", "IDVD_HTTP_HEADER_DEADLINE_SECONDS": "0"],
                                      overrides: ["analysis.queue_limit": "0", "http.per_address_connections": "9"])
        XCTAssertEqual(c.analysis.threads, 3)
        XCTAssertEqual(c.analysis.queueLimit, 0)
        XCTAssertEqual(c.clients.headerDeadlineSeconds, 0)
        XCTAssertEqual(c.clients.perAddressConnections, 9)
        XCTAssertThrowsError(try ServerConfig.load(file: nil, environment: [:], overrides: ["analysis.threads": "0"]))
        XCTAssertTrue(ServerConfig.helpTable.contains("analysis.memory_budget_mib"))
    }
}
