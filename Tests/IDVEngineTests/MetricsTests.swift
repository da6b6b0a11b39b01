import XCTest
@testable import IDVEngine
import IDVRuntime
import IDVOperations

/// The exposition text stays valid whatever a client sends as its HTTP method.
final class MetricsTests: XCTestCase {
    func testUnknownMethodsShareOneLabelAndNeverReachTheText() {
        let m = Metrics()
        m.observeRequest(route: "/healthz", method: "GET", status: 200, seconds: 0.001)
        m.observeRequest(route: "unmatched", method: "A\"B", status: 405, seconds: 0.001)
        m.observeRequest(route: "unmatched", method: "XYZ1", status: 405, seconds: 0.001)
        m.observeRequest(route: "unmatched", method: "XYZ2", status: 405, seconds: 0.001)
        let text = m.render(inFlight: 0, queued: 0)
        XCTAssertTrue(text.contains("idvd_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1"), text)
        XCTAssertTrue(text.contains("idvd_http_requests_total{route=\"unmatched\",method=\"other\",status=\"405\"} 3"), text)
        XCTAssertFalse(text.contains("A\"B"))
        XCTAssertFalse(text.contains("XYZ"))
    }
}
