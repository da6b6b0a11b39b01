import Foundation
import IDVKit

// The sample app: the codelabs' screens as a terminal app.
print("idv \(IDVKit.version) — the OpenIDV sample app")
