// The module the codelabs import (`import RELID`, e.g. seed 002 L531): IDVKit under the REL-ID
// SDK's module name, so the codelabs' `RDNAIDVService.swift`, `RDNAIDVDelegateManager.swift` and
// screens build against OpenIDV without an edit. New code may `import IDVKit` directly; both give
// the same API (README "Coming from the codelabs", docs/SEED-CONFORMANCE.md).
@_exported import IDVKit
