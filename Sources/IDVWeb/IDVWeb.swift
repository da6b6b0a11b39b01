import Foundation

/// The hosted verification page (`/verify/…`): plain HTML, CSS and JavaScript modules shipped as
/// SwiftPM resources (`Sources/IDVWeb/Assets`), looked up by name with their content type and cache
/// policy. No build step, no third-party code, no external request: every asset is served by `idvd`
/// under ``WebAssets/contentSecurityPolicy``.
///
/// The page is a second client of the wire protocol (docs/PROTOCOL.md, docs/WORKFLOWS.md): it
/// speaks the same routes and challenges as IDVKit, from the phone's browser with its camera.
public enum IDVWeb {
    /// The URL prefix the page is served under.
    public static let pathPrefix = "/verify"
    /// The page itself (served for `/verify` and `/verify/`).
    public static let indexName = "index.html"
}

/// How a browser may keep an asset.
public enum WebCachePolicy: String, Sendable, Equatable {
    /// `Cache-Control: no-store` — the document that shows personal data (document fields,
    /// portrait, selfie): never written to a cache or kept in the back/forward cache.
    case noStore = "no-store"
    /// `Cache-Control: no-cache` — code and styles: cacheable, revalidated on every use, so a
    /// new server version is picked up at once.
    case revalidate = "no-cache"

    /// The `Cache-Control` header value.
    public var headerValue: String { rawValue }
}

/// One asset: its name (`app.js`), bytes, `Content-Type` and cache policy.
public struct WebAsset: Sendable, Equatable {
    public let name: String
    public let bytes: Data
    public let contentType: String
    public let cachePolicy: WebCachePolicy
}

/// Why the assets could not be loaded.
public enum WebAssetsError: Error, Equatable, CustomStringConvertible {
    /// No asset folder was found (the resource bundle is not beside the executable and no
    /// `web.assets_dir` was given); the paths tried are listed.
    case notFound([String])
    /// The folder has a file whose name or type the server does not serve.
    case unservable(String)
    /// A file could not be read.
    case unreadable(String)
    /// The folder has no `index.html`.
    case noIndex(String)

    public var description: String {
        switch self {
        case let .notFound(paths): return "web assets not found (tried: \(paths.joined(separator: ", "))); set web.assets_dir to the folder holding index.html"
        case let .unservable(name): return "web asset '\(name)': only lower-case names of letters, digits and '-' ending in .html, .css, .js, .svg, .png or .webmanifest are served"
        case let .unreadable(path): return "web asset \(path) cannot be read"
        case let .noIndex(dir): return "web assets folder \(dir) has no index.html"
        }
    }
}

/// The page's assets, read once into memory (about 100 KB) and looked up by name.
public struct WebAssets: Sendable {
    public let directory: URL
    private let byName: [String: WebAsset]

    /// Names served: lower-case letters, digits and `-`, one dot, a known extension. The flat
    /// namespace means a request path can never name anything outside the folder.
    public static func isServableName(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        let stem = name[..<dot], ext = name[name.index(after: dot)...]
        guard stem.count <= 64, stem.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }) else { return false }
        return contentType(extension: String(ext)) != nil
    }

    /// `Content-Type` by extension (UTF-8 for text); nil for a type the server does not serve.
    public static func contentType(extension ext: String) -> String? {
        switch ext {
        case "html": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js": return "text/javascript; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "webmanifest": return "application/manifest+json"
        default: return nil
        }
    }

    /// Reads every file of `directory` (not recursive). Throws ``WebAssetsError``.
    public init(directory: URL) throws {
        self.directory = directory
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: directory.path) else { throw WebAssetsError.unreadable(directory.path) }
        var map: [String: WebAsset] = [:]
        for name in names.sorted() where !name.hasPrefix(".") {
            guard Self.isServableName(name), let ext = name.split(separator: ".").last, let type = Self.contentType(extension: String(ext)) else {
                throw WebAssetsError.unservable(name)
            }
            guard let data = fm.contents(atPath: directory.appendingPathComponent(name).path) else {
                throw WebAssetsError.unreadable(directory.appendingPathComponent(name).path)
            }
            map[name] = WebAsset(name: name, bytes: data, contentType: type, cachePolicy: name == IDVWeb.indexName ? .noStore : .revalidate)
        }
        guard map[IDVWeb.indexName] != nil else { throw WebAssetsError.noIndex(directory.path) }
        byName = map
    }

    /// The asset called `name` (e.g. `app.js`), or nil.
    public func asset(named name: String) -> WebAsset? { byName[name] }

    /// Every asset name, sorted.
    public var names: [String] { byName.keys.sorted() }

    /// The folders searched for the bundled assets, in order: the SwiftPM resource bundle
    /// (`OpenIDV_IDVWeb.resources`, or `.bundle` on Apple platforms) beside the running
    /// executable — which is where `swift build` puts it and where an install must copy it —
    /// then the source folder of this checkout (a binary run from its build tree).
    public static func searchPaths() -> [URL] {
        var roots: [URL] = [Bundle.main.bundleURL]
        if let exe = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent(), !roots.contains(exe) { roots.append(exe) }
        var paths: [URL] = []
        for r in roots {
            paths.append(r.appendingPathComponent("OpenIDV_IDVWeb.resources/Assets"))
            paths.append(r.appendingPathComponent("OpenIDV_IDVWeb.bundle/Contents/Resources/Assets"))
            paths.append(r.appendingPathComponent("OpenIDV_IDVWeb.bundle/Assets"))
        }
        paths.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Assets"))
        return paths
    }

    /// The bundled assets (see ``searchPaths()``), or those of `directory` when given
    /// (`web.assets_dir`: an operator's own copy, e.g. with their logo). Throws ``WebAssetsError``.
    public static func load(directory: String? = nil) throws -> WebAssets {
        if let directory { return try WebAssets(directory: URL(fileURLWithPath: directory)) }
        let candidates = searchPaths()
        for c in candidates where FileManager.default.fileExists(atPath: c.appendingPathComponent(IDVWeb.indexName).path) {
            return try WebAssets(directory: c)
        }
        throw WebAssetsError.notFound(candidates.map(\.path))
    }

    // MARK: Response headers

    /// The Content-Security-Policy of every asset: scripts, styles, connections and fonts only from
    /// idvd itself (no inline script or style, no `eval`), images also from `data:`/`blob:` URLs
    /// (the server's base64 portraits and the page's own captures), no plugins, no framing, no
    /// `<base>` rewriting, and DOM sinks that take strings (`innerHTML`, …) refused outright
    /// (Trusted Types with no policy), so injected markup can never run.
    public static let contentSecurityPolicy = [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "media-src 'self' blob:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    ].joined(separator: "; ")

    /// Headers sent with every asset (besides `Content-Type`): CSP, cache policy, no MIME sniffing,
    /// no referrer (a link's token never leaves in a `Referer`), camera for this origin only and no
    /// other powerful feature, no framing, a separate browsing-context group.
    public static func headers(for asset: WebAsset) -> [String: String] {
        [
            "Content-Security-Policy": contentSecurityPolicy,
            "Cache-Control": asset.cachePolicy.headerValue,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY",
            "Permissions-Policy": "camera=(self), microphone=(), geolocation=(), payment=(), usb=()",
            "Cross-Origin-Opener-Policy": "same-origin",
            "Cross-Origin-Resource-Policy": "same-origin",
        ]
    }
}
