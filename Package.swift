// swift-tools-version:6.0
//
// OpenIDV — an open identity-verification platform (server `idvd`, SDK `IDVKit`, sample app `idv`).
// Layout: ARCHITECTURE.md §3. C and C++ libraries come from Debian packages (see scripts/bootstrap);
// no Swift package outside the toolchain is used.
import PackageDescription

/// C++ hot code (dlib) is compiled with optimisation in every configuration so debug builds and
/// `swift test` run the face engine at full speed.
let optimisedCXX: [CXXSetting] = [.unsafeFlags(["-O2", "-DNDEBUG", "-DDLIB_NO_GUI_SUPPORT"])]

let package = Package(
    name: "OpenIDV",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "IDVCore", targets: ["IDVCore"]),
        .library(name: "IDVKit", targets: ["IDVKit"]),
        // The codelabs' `import RELID`: IDVKit re-exported under the REL-ID SDK's module name.
        .library(name: "RELID", targets: ["RELID"]),
        .library(name: "MRZ", targets: ["MRZ"]),
        .library(name: "EMRTD", targets: ["EMRTD"]),
        .executable(name: "idvd", targets: ["idvd"]),
        .executable(name: "idv", targets: ["idv"]),
    ],
    targets: [
        // MARK: System libraries (Debian -dev packages)
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // libpq: the PostgreSQL store (IDVStorePostgres).
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev"])]),
        // libmicrohttpd: MHD_start_daemon is variadic, so a small C target wraps it (INTEROP-NOTES.md).
        .target(
            name: "CMicroHTTPD",
            cSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("microhttpd")]
        ),

        // MARK: Shared vocabulary
        .target(name: "IDVCore"),
        // The evidence vocabulary beneath the readers and the engine: typed document checks and
        // findings, selfie evidence. No verdicts, no sentences.
        .target(name: "IDVEvidence"),

        // MARK: Document and face analysis
        // No unsafe flags: `MRZ` is a product others may depend on, and SwiftPM refuses unsafe flags in
        // a dependency. Release builds (`idvd bench mrz`) are optimised; debug MRZTests take ~2 min
        // instead of ~25 s on 2 shared cores.
        .target(name: "MRZ"),
        // Image codecs (libjpeg-turbo, libpng) behind a plain C header, beneath both readers.
        .target(name: "CImaging", cxxSettings: optimisedCXX,
                linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png"), .linkedLibrary("exif")]),
        .target(name: "Imaging", dependencies: ["CImaging"]),
        // Tesseract (Debian libtesseract-dev; tessdata from tesseract-ocr-eng) behind a plain C header:
        // the printed names of the visual zone, cross-checked with the MRZ's.
        .target(name: "CTesseract", cSettings: [.unsafeFlags(["-O2"])], linkerSettings: [.linkedLibrary("tesseract")]),
        // dlib (face engine) and OpenCV dnn (texture PAD); Debian's OpenCV ships no pkg-config file
        // without the umbrella libopencv-dev, so its include folder is named here.
        .target(
            name: "CVision",
            dependencies: ["CImaging"],
            cxxSettings: optimisedCXX + [.unsafeFlags(["-I/usr/include/opencv4"])],
            linkerSettings: [
                .linkedLibrary("dlib"), .linkedLibrary("blas"), .linkedLibrary("lapack"),
                .linkedLibrary("jpeg"), .linkedLibrary("png"),
                .linkedLibrary("opencv_dnn"), .linkedLibrary("opencv_imgproc"), .linkedLibrary("opencv_core"),
                .linkedLibrary("sodium"),
            ]
        ),
        // The MiniFASNet ONNX files (Apache-2.0, with LICENSE and SOURCES.md) ship as resources.
        // Pixel loops (attack synthesis, landmark geometry) are optimised in every configuration.
        .target(name: "FaceKit", dependencies: ["CVision", "Imaging"], resources: [.copy("Models")],
                swiftSettings: [.unsafeFlags(["-O"])]),
        // eMRTD chip: OpenSSL (CMS, X.509, CRL) and OpenJPEG behind one plain C header, optimised in every configuration.
        .target(
            name: "CEMRTD",
            cSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("crypto"), .linkedLibrary("openjp2")]
        ),
        // LDS parsing (ICAO 9303-10) and passive-authentication evidence (9303-11 §5.1, 9303-12): evidence, no verdicts.
        .target(name: "EMRTD", dependencies: ["CEMRTD", "MRZ"]),
        // Pixel loops (localiser, recogniser, augmentation) are optimised in every configuration so that
        // classifier training at start-up and `swift test` over image corpora run at full speed.
        // The OCR-B classifier's parameters (Resources/ocrb-lda.bin, written by `idvd ocrb train`) load at start-up.
        .target(name: "DocumentReader", dependencies: ["MRZ", "Imaging", "FaceKit", "IDVEvidence", "CCairo", "CTesseract"],
                exclude: ["Resources/SOURCES.md"], resources: [.copy("Resources/ocrb-lda.bin")],
                swiftSettings: [.unsafeFlags(["-O"])]),
        // Not part of serving: the specimen generator, augmentations, evaluation harnesses, the
        // phone-camera simulation of the illumination challenge and the loopback HTTP client of the benchmarks.
        .target(name: "IDVTools", dependencies: ["DocumentReader", "MRZ", "Imaging", "CCairo", "FaceKit"],
                swiftSettings: [.unsafeFlags(["-O"])]),

        // MARK: Server (ARCHITECTURE.md §3)
        // engine ← runtime ← operations ← HTTP ← idvd; crypto, stores, readers and webhooks beside.
        // The flow core and its ports: flows (typed reducers), the policy (the only judge), effects,
        // the store and reader protocols; no C module, no reader, no process concern (the evidence
        // vocabulary, IDVEvidence, is re-exported).
        .target(name: "IDVEngine", dependencies: ["IDVCore", "IDVEvidence"]),
        // The process runtime: the server configuration and its one settings table, key location,
        // logging, metrics, analysis admission.
        .target(name: "IDVRuntime", dependencies: ["IDVEngine", "IDVCore"]),
        // The relying party's and the operator's side, built on the engine: the read model and
        // reviews, API clients, webhook admin, verification links, admin commands, the expiry sweep.
        .target(name: "IDVOperations", dependencies: ["IDVEngine", "IDVRuntime", "IDVCore"]),
        // libsodium behind the engine's EngineCrypto and Vault.
        .target(name: "IDVCrypto", dependencies: ["IDVEngine", "IDVRuntime", "CSodium"]),
        // The SQL of both stores written once: statements, row mapping, audit chain, key rotation,
        // over a small dialect; internal to the two stores (not a product).
        .target(name: "IDVStoreSQL", dependencies: ["IDVEngine", "IDVCrypto", "IDVCore"]),
        .target(name: "IDVStoreSQLite", dependencies: ["IDVEngine", "IDVRuntime", "IDVStoreSQL", "IDVCrypto", "IDVCore", "CSQLite"]),
        // The same Store on PostgreSQL (libpq): N stateless idvd nodes on one database.
        .target(name: "IDVStorePostgres", dependencies: ["IDVEngine", "IDVRuntime", "IDVStoreSQL", "IDVCrypto", "IDVCore", "CPostgres"]),
        // The hosted verification page: HTML, CSS and JavaScript modules as resources (no build step).
        .target(name: "IDVWeb", resources: [.copy("Assets")]),
        .target(name: "IDVHTTP", dependencies: ["IDVEngine", "IDVRuntime", "IDVOperations", "IDVCore", "IDVWeb", "CMicroHTTPD"]),
        // The webhook delivery worker and signatures (docs/WEBHOOKS.md): URLSession (FoundationNetworking on Linux).
        .target(name: "IDVWebhooks", dependencies: ["IDVEngine", "IDVRuntime", "IDVCore", "IDVCrypto"]),
        // FaceKit and DocumentReader behind the engine's analyser protocols.
        .target(name: "IDVReaders", dependencies: ["IDVEngine", "IDVRuntime", "IDVCore", "IDVCrypto", "FaceKit", "DocumentReader", "MRZ", "Imaging", "EMRTD"]),
        // The one composition root: serve, admin, offline tools, benchmarks.
        .executableTarget(name: "idvd", dependencies: [
            "IDVCore", "IDVEngine", "IDVRuntime", "IDVOperations", "IDVCrypto", "IDVStoreSQLite", "IDVStorePostgres", "IDVHTTP", "IDVReaders",
            "IDVTools", "IDVWebhooks", "MRZ", "Imaging", "FaceKit", "DocumentReader", "EMRTD",
        ]),

        // What tests share (never linked into a product): test-data locations and the CI rule for
        // missing data, test doubles in the real readers' evidence shape.
        .target(name: "IDVTestSupport", dependencies: ["IDVEngine", "IDVRuntime", "IDVCore", "IDVCrypto"]),

        // MARK: Client SDK and sample app (Foundation only, builds for iOS too)
        .target(name: "IDVKit", dependencies: ["IDVCore"]),
        .target(name: "RELID", dependencies: ["IDVKit"]),
        .executableTarget(name: "idv", dependencies: ["IDVKit"]),

        // MARK: Tests
        .testTarget(name: "IDVCoreTests", dependencies: ["IDVCore"], resources: [.copy("Fixtures")]),
        .testTarget(name: "MRZTests", dependencies: ["MRZ", "IDVTestSupport"]),
        .testTarget(name: "ImagingTests", dependencies: ["Imaging"]),
        .testTarget(name: "FaceKitTests", dependencies: ["FaceKit", "Imaging", "IDVTestSupport"]),
        .testTarget(name: "EMRTDTests", dependencies: ["EMRTD", "idvd", "IDVTestSupport"]),
        .testTarget(name: "DocumentReaderTests", dependencies: [
            "DocumentReader", "MRZ", "FaceKit", "Imaging", "IDVTools", "IDVEvidence", "IDVEngine", "IDVRuntime", "IDVReaders", "IDVTestSupport",
        ]),
        .testTarget(name: "IDVEngineTests", dependencies: [
            "IDVEngine", "IDVRuntime", "IDVOperations", "IDVCore", "IDVCrypto", "IDVStoreSQL", "IDVStoreSQLite", "IDVTestSupport",
        ]),
        // The Store contract run against both stores (SQLite; PostgreSQL on a throw-away cluster started
        // by the tests, scripts/pg-scratch), and several real `idvd` nodes on one PostgreSQL.
        .testTarget(name: "IDVStoreTests", dependencies: [
            "IDVEngine", "IDVRuntime", "IDVOperations", "IDVCore", "IDVCrypto", "IDVStoreSQL", "IDVStoreSQLite", "IDVStorePostgres", "IDVTools", "IDVTestSupport",
            "IDVWebhooks", "idvd", "idv",
        ]),
        // The server as a whole: in-process servers over the test doubles, real `idvd` processes,
        // the real reader adapters.
        .testTarget(name: "IDVServerTests", dependencies: [
            "IDVEngine", "IDVRuntime", "IDVOperations", "IDVCore", "IDVCrypto", "IDVStoreSQL", "IDVStoreSQLite", "IDVHTTP", "IDVReaders", "IDVTools",
            "IDVTestSupport", "FaceKit", "Imaging", "idvd", "IDVWebhooks",
        ]),
        // The SDK against an in-process server (engine, HTTP, SQLite — no reader, no dlib) and real
        // `idvd`/`idv` processes.
        .testTarget(name: "IDVKitTests", dependencies: [
            "IDVKit", "IDVCore", "IDVEngine", "IDVRuntime", "IDVOperations", "IDVCrypto", "IDVStoreSQLite", "IDVHTTP", "IDVTestSupport", "idvd", "idv",
        ]),
        // The codelabs' own Swift (Tests/SeedApp/Seeds, extracted verbatim by scripts/extract-seed-swift),
        // built against IDVKit through `import RELID`, and the tests that drive it against a real idvd.
        // Swift 5 language mode: the codelabs are Swift 5.5 code (seed 000 L71), written before strict
        // concurrency checking. The seed code's own warnings (docs/SEED-CONFORMANCE.md §3) are not ours
        // to fix, so SeedApp alone is compiled with them suppressed.
        .target(name: "SeedApp", dependencies: ["RELID"], path: "Tests/SeedApp",
                swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-suppress-warnings"])]),
        .testTarget(name: "SeedConformanceTests", dependencies: ["SeedApp", "RELID", "IDVKit", "IDVTestSupport", "idvd"],
                    swiftSettings: [.swiftLanguageMode(.v5)]),
        // The hosted page: its assets and routes, verification links, and every flow in headless
        // Chromium with a fake camera (Tests/IDVWebTests/browser, driven by Selenium).
        .testTarget(name: "IDVWebTests", dependencies: [
            "IDVWeb", "IDVHTTP", "IDVEngine", "IDVRuntime", "IDVOperations", "IDVCore", "IDVCrypto", "IDVTools", "IDVTestSupport", "CSQLite", "idvd",
        ], exclude: ["browser"]),
    ],
    cxxLanguageStandard: .cxx17
)
