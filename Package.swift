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
        .library(name: "MRZ", targets: ["MRZ"]),
        .executable(name: "idvd", targets: ["idvd"]),
        .executable(name: "idv", targets: ["idv"]),
    ],
    targets: [
        // MARK: System libraries (Debian -dev packages)
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
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

        // MARK: Document and face analysis
        // Pure-Swift hot code: optimised in every configuration so the 10,000-MRZ tests stay fast in debug.
        .target(name: "MRZ", swiftSettings: [.unsafeFlags(["-O"])]),
        .target(
            name: "CVision",
            cxxSettings: optimisedCXX,
            linkerSettings: [
                .linkedLibrary("dlib"), .linkedLibrary("blas"), .linkedLibrary("lapack"),
                .linkedLibrary("jpeg"), .linkedLibrary("png"),
            ]
        ),
        .target(name: "FaceKit", dependencies: ["CVision"]),
        // Pixel loops (localiser, recogniser, augmentation) are optimised in every configuration so that
        // classifier training at start-up and `swift test` over image corpora run at full speed.
        // The OCR-B classifier's parameters (Resources/ocrb-lda.bin, written by `idvd ocrb train`) load at start-up.
        .target(name: "DocumentReader", dependencies: ["MRZ", "FaceKit", "IDVCore", "CCairo"],
                exclude: ["Resources/SOURCES.md"], resources: [.copy("Resources/ocrb-lda.bin")],
                swiftSettings: [.unsafeFlags(["-O"])]),

        // MARK: Server
        .target(
            name: "IDVServer",
            dependencies: [
                "IDVCore", "MRZ", "FaceKit", "DocumentReader",
                "CMicroHTTPD", "CSQLite", "CSodium", "CPostgres",
            ]
        ),
        .executableTarget(name: "idvd", dependencies: ["IDVServer", "IDVCore", "MRZ", "FaceKit", "DocumentReader"]),

        // MARK: Client SDK and sample app (Foundation only, builds for iOS too)
        .target(name: "IDVKit", dependencies: ["IDVCore"]),
        .executableTarget(name: "idv", dependencies: ["IDVKit"]),

        // MARK: Tests
        .testTarget(name: "IDVCoreTests", dependencies: ["IDVCore"], resources: [.copy("Fixtures")]),
        .testTarget(name: "MRZTests", dependencies: ["MRZ"]),
        .testTarget(name: "FaceKitTests", dependencies: ["FaceKit"]),
        .testTarget(name: "DocumentReaderTests", dependencies: ["DocumentReader", "MRZ", "FaceKit"]),
        .testTarget(name: "IDVServerTests", dependencies: ["IDVServer", "IDVCore", "idvd"]),
        .testTarget(name: "IDVKitTests", dependencies: ["IDVKit", "IDVCore", "IDVServer", "idvd", "idv"]),
    ],
    cxxLanguageStandard: .cxx17
)
