import FaceKit
import Foundation
import IDVCrypto
import Imaging

/// `idvd bench face` on an LFW-format set (`--pairs F --images D`): per image one detection and
/// the descriptors of every matcher variant (dlib ResNet; face-reidentification-retail-0095 aligned
/// by dlib's 68 points or by landmarks-regression-retail-0009), cached; then, per variant, the
/// comparison protocols (image-to-image, fused(k)-to-image, fused(k)-to-fused(k)) with thresholds
/// fitted on the fit people of the fixed split (`bench/lfw-split.txt`) and FMR/FNMR reported on the
/// other people, and the realised FMR/FNMR of FaceKit's shipped thresholds on every person the
/// shipped calibration was not fitted on.
enum FaceRecognitionBench {
    // MARK: Variants

    /// A matcher: a descriptor model and how the face is aligned for it.
    enum Variant: String, CaseIterable {
        /// dlib ResNet v1 on dlib's 5-point alignment (the matcher of version-1/2 templates).
        case dlib
        /// face-reidentification-retail-0095 aligned by 5 points from dlib's 68 (eye centres, nose tip, mouth corners).
        case reidDlib68 = "reid0095-dlib68"
        /// face-reidentification-retail-0095 aligned by landmarks-regression-retail-0009 on dlib's box.
        case reidRegression = "reid0095-lmk0009"
        /// The same with the box grown by 10 % of its size on each side (nearer the Open Model Zoo detector's boxes).
        case reidRegressionWide = "reid0095-lmk0009-wide"
        /// Aligned by the mean of the two point sets (dlib's 68 and the regressor's).
        case reidMixed = "reid0095-mixed"
        /// `reidDlib68` averaged with the descriptor of the mirrored aligned face (test-time flip).
        case reidDlib68Flip = "reid0095-dlib68-flip"
        /// `reidRegression` averaged with the descriptor of the mirrored aligned face.
        case reidRegressionFlip = "reid0095-lmk0009-flip"

        var model: FaceDescriptorModel { self == .dlib ? .dlibResNetV1 : .faceReidentification0095 }
        var metric: FaceDescriptorMetric { model.metric }

        /// The variant FaceKit ships (`SelfieAnalyzer`, `FaceRecognizer` in the server).
        static let shipped = Variant.reidDlib68
    }

    // MARK: Per-image measures (cached)

    /// What the bench keeps per image.
    struct Measure {
        /// The face box used (the detection nearest the centre, or the centred fallback box).
        var box: FaceBox
        var fellBack: Bool
        /// Variance of the Laplacian of the grey face box at 128×128 (`FaceQuality.sharpness`).
        var sharpness: Double
        var pose: HeadPose?
        /// Descriptor per variant (dlib: 128 as they come; reid: 256, L2-normalised).
        var descriptors: [Variant: [Float]]
        /// Mean distance, in inter-eye distances, between landmarks-regression-retail-0009's 5 points
        /// and those from dlib's 68 (a check that the regressor's ONNX runs as its authors meant).
        var landmarkDisagreement: Double
        /// One-core CPU ms of each stage for this image: detect, 68 landmarks, dlib 5 + descriptor,
        /// 0095 align + embed, 0009 regression.
        var cpuMs: [Double]
        /// SHA-256 (32 bytes) of the image file's bytes this was measured on; empty when unknown (a
        /// record of an "IDVFB1" cache), which matches no file, so such a record is never reused.
        var digest: [UInt8] = []
    }

    static let stageNames = ["detect (HOG, image doubled)", "68 landmarks", "dlib 5 landmarks + descriptor", "0095 align + embed",
                             "0009 landmark regression"]

    /// The cache key: the models' hashes and the protocol version, so a changed model or method
    /// never reads stale descriptors.
    static func cacheKey(engine: FaceEngine) -> String {
        let dlibHashes = FaceEngine.selfieModels.map { m -> String in
            (try? String(contentsOf: engine.modelsDirectory.appendingPathComponent(m.rawValue + ".sha256"), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines).prefix(16).description ?? m.rawValue
        }
        let text = (["face-bench-v1", FaceRecognizer.sha256, FaceLandmarkRegressor.sha256, FaceEngine.hogDetectorSHA256] + dlibHashes)
            .joined(separator: "|")
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return String(h, radix: 16)
    }

    /// Measures one image.
    static func measure(_ image: Image, engine: FaceEngine, recognizer: FaceRecognizer, regressor: FaceLandmarkRegressor) throws -> Measure {
        var cpu = [Double](repeating: 0, count: stageNames.count)
        let centre = FacePoint(x: Double(image.width) / 2, y: Double(image.height) / 2)
        var detections: [DetectedFace] = []
        cpu[0] = try FaceBench.cpu {
            detections = try engine.detect(in: image)
            if detections.isEmpty { detections = try engine.detect(in: image, options: .init(adjustThreshold: -0.5)) }
        }
        let fellBack = detections.isEmpty
        let box = detections.min { $0.box.center.distance(to: centre) < $1.box.center.distance(to: centre) }?.box
            ?? FaceBox(left: Double(image.width) * 0.28, top: Double(image.height) * 0.28,
                       right: Double(image.width) * 0.72, bottom: Double(image.height) * 0.72)
        var points68: [FacePoint] = []
        cpu[1] = try FaceBench.cpu { points68 = try engine.landmarks(in: image, box: box, count: 68) }
        var dlib: [Float] = []
        cpu[2] = try FaceBench.cpu {
            let five = try engine.landmarks(in: image, box: box, count: 5)
            dlib = try engine.embedding(in: image, landmarks: five)
        }
        guard let fromDlib = AlignmentPoints(landmarks68: points68) else { throw FaceError.invalidArgument("no 68 landmarks") }
        var reid68: [Float] = []
        cpu[3] = try FaceBench.cpu { reid68 = try recognizer.embedding(in: image, points: fromDlib) }
        var regressed: AlignmentPoints?
        cpu[4] = try FaceBench.cpu { regressed = try regressor.points(in: image, box: box) }
        let wide = try regressor.points(in: image, box: box.expanded(by: 0.1))
        let face = FaceAnalysis(box: box, confidence: 0, detector: .hog, landmarks5: [], landmarks68: points68, embedding: nil)
        let quality = try engine.quality(of: face, in: image, faceCount: 1)
        let disagreement = zip(regressed!.points, fromDlib.points).map { $0.distance(to: $1) }.reduce(0, +) / 5
            / max(1, fromDlib.interEyeDistance)
        return Measure(box: box, fellBack: fellBack, sharpness: quality.sharpness, pose: face.pose,
                       descriptors: [.dlib: dlib, .reidDlib68: reid68,
                                     .reidRegression: try recognizer.embedding(in: image, points: regressed!),
                                     .reidRegressionWide: try recognizer.embedding(in: image, points: wide)],
                       landmarkDisagreement: disagreement, cpuMs: cpu.map { $0 * 1000 })
    }

    /// The descriptors of `variants` a cached measure lacks, computed on its cached box.
    static func fill(_ m: inout Measure, image: Image, variants: [Variant], engine: FaceEngine, recognizer: FaceRecognizer,
                     regressor: FaceLandmarkRegressor) throws {
        let missing = variants.filter { m.descriptors[$0] == nil }
        guard !missing.isEmpty else { return }
        let points68 = try engine.landmarks(in: image, box: m.box, count: 68)
        guard let fromDlib = AlignmentPoints(landmarks68: points68) else { throw FaceError.invalidArgument("no 68 landmarks") }
        let regressed = try regressor.points(in: image, box: m.box)
        func flipped(_ p: AlignmentPoints) throws -> [Float] {
            let a = try recognizer.embedding(in: image, points: p)
            let b = try recognizer.embedding(alignedFace: FaceRecognizer.alignedFace(in: image, points: p).flippedHorizontally())
            return try FaceTemplate.fused([a, b], model: .faceReidentification0095).descriptor
        }
        for v in missing {
            switch v {
            case .dlib:
                m.descriptors[v] = try engine.embedding(in: image, landmarks: engine.landmarks(in: image, box: m.box, count: 5))
            case .reidDlib68: m.descriptors[v] = try recognizer.embedding(in: image, points: fromDlib)
            case .reidRegression: m.descriptors[v] = try recognizer.embedding(in: image, points: regressed)
            case .reidRegressionWide:
                m.descriptors[v] = try recognizer.embedding(in: image, points: regressor.points(in: image, box: m.box.expanded(by: 0.1)))
            case .reidMixed:
                let mixed = try AlignmentPoints(zip(fromDlib.points, regressed.points).map { FacePoint(x: ($0.x + $1.x) / 2, y: ($0.y + $1.y) / 2) })
                m.descriptors[v] = try recognizer.embedding(in: image, points: mixed)
            case .reidDlib68Flip: m.descriptors[v] = try flipped(fromDlib)
            case .reidRegressionFlip: m.descriptors[v] = try flipped(regressed)
            }
        }
    }

    /// The measures of every image in `names` (paths relative to `imagesDir`): a cached measure is
    /// used only when it was taken on the same bytes (SHA-256 of the file), under this name or any
    /// other name; every other image is measured with `threads` threads, and the cache is written
    /// back when anything was measured. Prints one line saying how many were measured (or that all
    /// came from the cache), which images changed since they were cached, and which could not be
    /// read or decoded (those are left out of the returned dictionary; nothing else is lost).
    /// Throws a `CLIError` when `cacheFile` could not be written after measuring: a folder, not a
    /// regular file, or in a folder that cannot be made or written (checked before any image is
    /// measured; the folder is made here, as the write would make it).
    static func checkWritable(_ cacheFile: URL) throws {
        let folder = cacheFile.deletingLastPathComponent().path
        var isDir: ObjCBool = false
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)   // as the write would
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw CLIError("--measure-cache \(cacheFile.path): no folder \(folder), and it cannot be made")
        }
        var st = stat()
        if stat(cacheFile.path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFREG else { throw CLIError("--measure-cache \(cacheFile.path) is not a regular file") }
            guard access(cacheFile.path, W_OK) == 0 else { throw CLIError("--measure-cache \(cacheFile.path) is not writable") }
        }
        guard access(folder, W_OK | X_OK) == 0 else { throw CLIError("--measure-cache \(cacheFile.path): cannot write in \(folder)") }
    }

    static func measures(names: [String], imagesDir: URL, cacheFile: URL, threads: Int, engine: FaceEngine,
                         variants: [Variant]) throws -> [String: Measure] {
        final class Box: @unchecked Sendable { // guarded by `lock`
            var store: [String: Measure] = [:]
            var failures: [String] = []
            let lock = NSLock()
        }
        let shared = Box()
        try checkWritable(cacheFile)
        if FileManager.default.fileExists(atPath: cacheFile.path) {
            do { shared.store = try MeasureCache.read(cacheFile) } catch {
                print("the measure cache \(cacheFile.path) could not be read (not an idvd bench face cache, or cut short): every image measured again, and the cache rewritten")
            }
        }
        // Each image's digest; a file that cannot be read is reported, not measured.
        let digests = names.reduce(into: [String: [UInt8]]()) { out, name in
            if let data = try? Data(contentsOf: imagesDir.appendingPathComponent(name)) {
                out[name] = Crypto.sha256([UInt8](data))
            } else {
                shared.failures.append(name)
            }
        }
        // Byte-identical images under two names (a copy or a link): one person's photo counted as another's.
        let sameBytes = Dictionary(grouping: names.filter { digests[$0] != nil }) { digests[$0]! }.values.filter { $0.count > 1 }
        if !sameBytes.isEmpty {
            print("warning: \(sameBytes.count) group\(sameBytes.count == 1 ? "" : "s") of images have the same bytes under different names "
                  + "(copies or links; each is compared as given): \(firstFew(sameBytes.map { $0.sorted().joined(separator: " = ") }))")
        }
        var byDigest: [[UInt8]: Measure] = [:]
        for m in shared.store.values where !m.digest.isEmpty { byDigest[m.digest] = m }
        var changed: [String] = [], undigested = 0, renamed = 0
        for name in names {
            guard let digest = digests[name] else { continue }
            if let m = shared.store[name], m.digest == digest { continue }
            if let m = shared.store[name] { if m.digest.isEmpty { undigested += 1 } else { changed.append(name) } }
            // The same bytes cached under another name (a copied or renamed set) are the same measure.
            shared.store[name] = byDigest[digest]
            if shared.store[name] != nil { renamed += 1 }
        }
        let todo = names.filter { n in
            digests[n] != nil && (shared.store[n].map { m in variants.contains { m.descriptors[$0] == nil } } ?? true)
        }
        if !changed.isEmpty {
            print("\(changed.count) of \(names.count) images changed since they were cached (their old measures dropped): \(firstFew(changed))")
        }
        if undigested > 0 {
            print("\(undigested) images cached without the digest of their bytes (an IDVFB1 cache), measured again")
        }
        if !todo.isEmpty {
            let recognizer = try FaceRecognizer.shared(), regressor = try FaceLandmarkRegressor.shared()
            let chunk = max(1, (todo.count + threads - 1) / threads)
            let chunks = stride(from: 0, to: todo.count, by: chunk).map { Array(todo[$0..<min(todo.count, $0 + chunk)]) }
            let wall = Command.measure {
                DispatchQueue.concurrentPerform(iterations: chunks.count) { c in
                    for (i, name) in chunks[c].enumerated() {
                        do {
                            let image = try Image(data: Data(contentsOf: imagesDir.appendingPathComponent(name)))
                            let cached = shared.lock.withLock { shared.store[name] }
                            var m = try cached ?? measure(image, engine: engine, recognizer: recognizer, regressor: regressor)
                            try fill(&m, image: image, variants: variants, engine: engine, recognizer: recognizer, regressor: regressor)
                            m.digest = digests[name]!
                            shared.lock.withLock { shared.store[name] = m }
                        } catch {
                            shared.lock.withLock { shared.failures.append(name) }
                        }
                        if c == 0, i % 250 == 249 {
                            print("  measured \((i + 1) * chunks.count) of \(todo.count) images…")
                        }
                    }
                }
            }
            let failed = Set(shared.failures)
            print(String(format: "measured %d images in %.0f s wall with %d thread(s); %d unreadable", todo.filter { !failed.contains($0) }.count,
                         wall, threads, shared.failures.count)
                  + (shared.failures.isEmpty ? "" : ": " + firstFew(shared.failures.sorted())))
        } else {
            print("measures of all \(names.count - shared.failures.count) readable images from the cache \(cacheFile.path)"
                  + (shared.failures.isEmpty ? "" : "; \(shared.failures.count) unreadable: " + firstFew(shared.failures.sorted())))
        }
        if !todo.isEmpty || renamed > 0 {
            try MeasureCache.write(shared.store, to: cacheFile)
        }
        return shared.store.filter { digests[$0.key] != nil && !shared.failures.contains($0.key) }
    }

    /// The first `count` of `names` joined by commas, with "and N more" when there are more.
    static func firstFew(_ names: [String], count: Int = 5) -> String {
        names.prefix(count).joined(separator: ", ") + (names.count > count ? " and \(names.count - count) more" : "")
    }

    // MARK: The split

    /// The fixed split of LFW people (`bench/lfw-split.txt`): person → `fit` or `eval`.
    static func readSplit(_ url: URL) throws -> [String: String] {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw CLIError("cannot read the split file \(url.path)") }
        var out: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard f.count == 2, f[1] == "fit" || f[1] == "eval" else { throw CLIError("split file \(url.path): bad line '\(line)'") }
            out[f[0]] = f[1]
        }
        return out
    }

    // MARK: Protocols

    /// Sorted genuine and impostor distances of one protocol.
    struct Scores {
        var genuine: [Double] = []
        var impostor: [Double] = []
        mutating func sort() { genuine.sort(); impostor.sort() }
    }

    /// Descriptors fused as FaceKit fuses them (`FaceTemplate.fused`): the (weighted) mean.
    static func fuse(_ ds: [[Float]], weights: [Double]?) -> [Float]? {
        guard let first = ds.first else { return nil }
        let w = weights ?? [Double](repeating: 1, count: ds.count)
        var sum = [Double](repeating: 0, count: first.count)
        for (d, wk) in zip(ds, w) { for i in 0..<d.count { sum[i] += wk * Double(d[i]) } }
        let total = w.reduce(0, +)
        return sum.map { Float($0 / total) }
    }

    /// The comparisons of `people` (each with its images in name order) for one variant:
    /// - `k` = 1, image to image: each image of a person with ≥ 2 images against the image after it
    ///   (cyclic); impostors: every image against every image of every other person;
    /// - `k` > 1, fused(k) to image: each image of a person with ≥ k + 1 images against the fused
    ///   descriptor of the k images after it (cyclic); impostors: every such k-set (and the one
    ///   k-set of a person with exactly k images) against every image of every other person;
    /// - `fusedBoth`, fused(k) to fused(k): the k images from each image against the k after them
    ///   (people with ≥ 2k images); impostors: every pair of such k-sets of different people.
    static func scores(_ variant: Variant, people: [String: [String]], measures: [String: Measure], k: Int, weighted: Bool,
                       fusedBoth: Bool = false) -> Scores {
        let metric = variant.metric
        func d(_ a: [Float], _ b: [Float]) -> Double { (try? metric.distance(a, b)) ?? .infinity }
        func descriptor(_ n: String) -> [Float]? { measures[n]?.descriptors[variant] }
        func set(_ names: [String]) -> [Float]? {
            let ms = names.compactMap { measures[$0] }
            guard ms.count == names.count else { return nil }
            let ds = ms.compactMap { $0.descriptors[variant] }
            guard ds.count == names.count else { return nil }
            if names.count == 1 { return ds[0] }
            let best = ms.map(\.sharpness).max() ?? 0
            let w = weighted ? ms.map { FaceTemplate.qualityWeight(sharpness: $0.sharpness, bestSharpness: best, pose: $0.pose) } : nil
            return fuse(ds, weights: w)
        }
        var out = Scores()
        let persons = people.keys.sorted()
        if fusedBoth {
            var sets: [(String, [Float])] = []
            for p in persons {
                let list = people[p]!
                guard list.count >= 2 * k else { continue }
                for i in 0..<list.count {
                    guard let a = set((0..<k).map { list[(i + $0) % list.count] }),
                          let b = set((k..<(2 * k)).map { list[(i + $0) % list.count] }) else { continue }
                    out.genuine.append(d(a, b))
                    sets.append((p, a))
                }
            }
            for i in sets.indices { for j in (i + 1)..<sets.count where sets[i].0 != sets[j].0 { out.impostor.append(d(sets[i].1, sets[j].1)) } }
            out.sort()
            return out
        }
        var sets: [(String, [Float])] = []
        for p in persons {
            let list = people[p]!
            guard list.count >= k else { continue }
            if list.count == k { if let s = set(list) { sets.append((p, s)) }; continue }
            for i in 0..<list.count {
                guard let s = set((1...k).map { list[(i + $0) % list.count] }), let r = descriptor(list[i]) else { continue }
                sets.append((p, s))
                out.genuine.append(d(r, s))
            }
        }
        let references = persons.flatMap { p in people[p]!.compactMap { n in descriptor(n).map { (p, $0) } } }
        out.impostor.reserveCapacity(sets.count * references.count)
        for (p, s) in sets { for (q, r) in references where q != p { out.impostor.append(d(r, s)) } }
        out.sort()
        return out
    }

    /// The largest distance with FMR ≤ `target` on sorted `impostors` (`FaceMatchCalibration.threshold`).
    static func threshold(_ target: Double, _ impostors: [Double]) -> Double {
        FaceMatchCalibration.threshold(targetFMR: target, impostorDistances: impostors) ?? 0
    }

    /// "a/b" counts and the rates at `t`: (false matches, impostors, false non-matches, genuine).
    static func counts(_ s: Scores, at t: Double) -> (fm: Int, imp: Int, fnm: Int, gen: Int) {
        let fm = s.impostor.prefix { $0 <= t }.count
        let fnm = s.genuine.count - (s.genuine.firstIndex { $0 > t } ?? s.genuine.count)
        return (fm, s.impostor.count, fnm, s.genuine.count)
    }

    static func percent(_ a: Int, _ b: Int, digits: Int) -> String {
        String(format: "%.\(digits)f %% (%d/%d)", b == 0 ? 0 : 100 * Double(a) / Double(b), a, b)
    }
}

/// The bench's binary cache of per-image measures (little-endian; names UTF-8): "IDVFB2", the
/// count (u32), then per image the name (u32 length + bytes, relative to the image folder), the
/// SHA-256 of the image file's bytes (32 bytes; all zero: unknown), box (4 f64, pixels), fallback
/// flag (1 byte), sharpness, pose (yaw, pitch, roll in degrees; NaN when absent), the landmark
/// disagreement (f64 each), the stage times (u32 count + f64 ms) and each variant's descriptor (u32
/// tag length + tag, u32 length + f32 values). "IDVFB1" files (no digest) are read with an unknown
/// digest, so every image is measured again. `bench/face_calibration_study.py` reads both.
enum MeasureCache {
    typealias Measure = FaceRecognitionBench.Measure
    typealias Variant = FaceRecognitionBench.Variant
    static let magic = Array("IDVFB2".utf8)
    static let magicWithoutDigests = Array("IDVFB1".utf8)

    static func write(_ store: [String: Measure], to url: URL) throws {
        var out = magic
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { out += $0 } }
        func f64(_ v: Double) { withUnsafeBytes(of: v.bitPattern.littleEndian) { out += $0 } }
        u32(store.count)
        for (name, m) in store.sorted(by: { $0.key < $1.key }) {
            let bytes = Array(name.utf8)
            u32(bytes.count); out += bytes
            out += m.digest.count == 32 ? m.digest : [UInt8](repeating: 0, count: 32)
            [m.box.left, m.box.top, m.box.right, m.box.bottom].forEach(f64)
            out.append(m.fellBack ? 1 : 0)
            f64(m.sharpness)
            [m.pose?.yaw ?? .nan, m.pose?.pitch ?? .nan, m.pose?.roll ?? .nan].forEach(f64)
            f64(m.landmarkDisagreement)
            u32(m.cpuMs.count); m.cpuMs.forEach(f64)
            u32(m.descriptors.count)
            for (v, d) in m.descriptors.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                let tag = Array(v.rawValue.utf8)
                u32(tag.count); out += tag
                u32(d.count)
                for f in d { withUnsafeBytes(of: f.bitPattern.littleEndian) { out += $0 } }
            }
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(out).write(to: url, options: .atomic)
    }

    struct Malformed: Error {}

    static func read(_ url: URL) throws -> [String: Measure] {
        let bytes = [UInt8](try Data(contentsOf: url))
        var i = 0
        func take(_ n: Int) throws -> ArraySlice<UInt8> {
            guard n >= 0, i + n <= bytes.count else { throw Malformed() }
            defer { i += n }
            return bytes[i..<(i + n)]
        }
        func u32() throws -> Int { Int(try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) }
        func f64() throws -> Double { Double(bitPattern: try take(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
        func string() throws -> String { String(decoding: try take(try u32()), as: UTF8.self) }
        let head = Array(try take(magic.count))
        guard head == magic || head == magicWithoutDigests else { throw Malformed() }
        var store: [String: Measure] = [:]
        for _ in 0..<(try u32()) {
            let name = try string()
            var digest = head == magic ? Array(try take(32)) : []
            if digest.allSatisfy({ $0 == 0 }) { digest = [] }
            let box = FaceBox(left: try f64(), top: try f64(), right: try f64(), bottom: try f64())
            let fell = try take(1).first! == 1
            let sharp = try f64()
            let (y, p, r) = (try f64(), try f64(), try f64())
            let dis = try f64()
            let cpu = try (0..<(try u32())).map { _ in try f64() }
            var ds: [Variant: [Float]] = [:]
            for _ in 0..<(try u32()) {
                let tag = try string()
                let n = try u32()
                let d = try (0..<n).map { _ in Float(bitPattern: try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) }
                if let v = Variant(rawValue: tag) { ds[v] = d }
            }
            store[name] = Measure(box: box, fellBack: fell, sharpness: sharp, pose: y.isNaN ? nil : HeadPose(yaw: y, pitch: p, roll: r),
                                  descriptors: ds, landmarkDisagreement: dis, cpuMs: cpu, digest: digest)
        }
        return store
    }
}

extension FaceRecognitionBench {
    /// One protocol of the report: `k` images fused against one (1 = image to image), or fused
    /// against fused.
    struct ComparisonProtocol: Hashable {
        var k: Int
        var fusedBoth = false
        var label: String { fusedBoth ? "fused(\(k))-to-fused(\(k))" : k == 1 ? "image-to-image" : "fused(\(k))-to-image" }
        var kind: FaceComparisonKind { fusedBoth ? .fusedToFused : k == 1 ? .imageToImage : .fusedToImage }
    }

    /// The whole LFW report (see the type's summary).
    static func run(engine: FaceEngine, pairsFile: URL, imagesDir: URL, splitFile: URL, splitIsDefault: Bool, ks: [Int], variants: [Variant],
                    threads: Int, cacheFile: URL?, weighted: Bool) throws {
        let pairs = try FaceBench.readPairs(pairsFile)
        // Every image (.jpg, .jpeg, .png in any case) of every person named in the pairs list.
        var people: [String: [String]] = [:]
        for person in Set(pairs.flatMap { [$0.a, $0.b] }.map { String($0.split(separator: "/")[0]) }) {
            let dir = imagesDir.appendingPathComponent(person)
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter(isImageFile).sorted()
            if !files.isEmpty { people[person] = files.map { "\(person)/\($0)" } }
        }
        var names = people.values.flatMap { $0 }.sorted()
        // Images the list names that are not in the folder (any of the extensions above counts).
        let present = Set(names.map { ($0 as NSString).deletingPathExtension })
        let missing = Set(pairs.flatMap { [$0.a, $0.b] }).filter { !present.contains(($0 as NSString).deletingPathExtension) }.sorted()
        if !missing.isEmpty {
            let absent = Set(missing.map { String($0.split(separator: "/")[0]) }).filter { people[$0] == nil }.count
            print("warning: \(missing.count) images the pairs list names are not under \(imagesDir.path): \(firstFew(missing))"
                  + (absent == 0 ? "" : absent == 1 ? " (1 person it names has no image there and is left out)"
                                                    : " (\(absent) people it names have no image there and are left out)"))
        }
        guard !names.isEmpty else { throw CLIError("no images of the pairs list's people under \(imagesDir.path)") }
        let cache = cacheFile ?? FileManager.default.homeDirectoryForCurrentUser
            .appendingPathComponent(".cache/openidv/bench/face-\(cacheKey(engine: engine))-\(stableHash(imagesDir.standardizedFileURL.path)).bin")
        let measures = try measures(names: names, imagesDir: imagesDir, cacheFile: cache, threads: threads, engine: engine, variants: variants)
        // Images that could not be read or decoded (named above) are left out of every figure.
        people = people.mapValues { $0.filter { measures[$0] != nil } }.filter { !$0.value.isEmpty }
        names = names.filter { measures[$0] != nil }
        // The default split file is read from the repository's working copy; elsewhere (or on a set
        // whose people it does not name) every person counts as unseen.
        let split = FileManager.default.fileExists(atPath: splitFile.path) || !splitIsDefault ? try readSplit(splitFile) : [:]
        let fitPeople = people.filter { split[$0.key] == "fit" }
        let unseenPeople = people.filter { split[$0.key] != "fit" }
        let evalPeople = people.filter { split[$0.key] == "eval" }
        print("")
        print("face matching on \(names.count) images of \(people.count) people (\(pairsFile.lastPathComponent), \(imagesDir.path))")
        print("split \(splitFile.lastPathComponent): \(fitPeople.count) people to fit thresholds on, \(evalPeople.count) eval people, "
              + "\(unseenPeople.count - evalPeople.count) people the split does not name (unseen, reported with eval)")
        let fallbacks = measures.values.filter(\.fellBack).count
        print("one detection per image (HOG, image doubled; the face nearest the centre); \(fallbacks) without a detection used the centred box")
        let cpu = (0..<stageNames.count).map { s in FaceBench.median(measures.values.compactMap { $0.cpuMs.count > s ? $0.cpuMs[s] : nil }) }
        print("CPU per image, one core, median: " + zip(stageNames, cpu).map { String(format: "%@ %.1f ms", $0, $1) }.joined(separator: ", "))
        let dis = measures.values.map(\.landmarkDisagreement).sorted()
        if !dis.isEmpty {
            print(String(format: "landmarks-regression-retail-0009 vs dlib's 68 (eye centres, nose tip, mouth corners): mean point distance / inter-eye distance, median %.3f, 90th percentile %.3f, max %.3f",
                         dis[dis.count / 2], dis[dis.count * 9 / 10], dis.last!))
        }
        let protocols = ks.map { ComparisonProtocol(k: $0) } + ks.filter { $0 > 1 }.prefix(1).map { ComparisonProtocol(k: $0, fusedBoth: true) }
        // FaceKit's shipped thresholds on every person they were not fitted on.
        print("")
        print("FaceKit's shipped thresholds (\(Variant.shipped.model.name), fitted on the fit people of \(splitFile.lastPathComponent)) on the "
              + "\(unseenPeople.count) people not used to fit them (\(unseenPeople.values.map(\.count).reduce(0, +)) images):")
        shippedLines(.shipped, people: unseenPeople, measures: measures, protocols: protocols, prefix: "shipped")
        poseLines(people: unseenPeople, measures: measures, variants: variants)
        let acquiredNames = Set(names.filter { measures[$0].map(acquired) ?? false })
        let gated = unseenPeople.mapValues { $0.filter(acquiredNames.contains) }.filter { !$0.value.isEmpty }
        let unseenImages = unseenPeople.values.map(\.count).reduce(0, +)
        print("the same, only images that pass FaceKit's acquisition rule for a selfie frame (a detected face, yaw/pitch/roll within "
              + "\(FaceQualityRequirements().maxYaw)/\(FaceQualityRequirements().maxPitch)/\(FaceQualityRequirements().maxRoll) degrees): "
              + "\(unseenImages - gated.values.map(\.count).reduce(0, +)) of \(unseenImages) images fail it (failure to acquire, not compared)")
        shippedLines(.shipped, people: gated, measures: measures, protocols: protocols.filter { $0.k <= 3 }, prefix: "quality-gated shipped")
        if variants.contains(.dlib) {
            print("dlib's shipped thresholds (version-1/2 templates) on the same people:")
            shippedLines(.dlib, people: unseenPeople, measures: measures, protocols: protocols.filter { $0.k <= 3 }, prefix: "dlib (legacy) at its")
        }
        if fitPeople.isEmpty || evalPeople.isEmpty {
            // A set the split does not divide (another set than LFW): nothing to fit thresholds on here.
            print("")
            print("no thresholds fitted on this set: \(splitFile.lastPathComponent) names \(fitPeople.count) fit and \(evalPeople.count) eval people of it "
                  + "(the lines above are the shipped thresholds)")
            return
        }
        for variant in variants {
            print("")
            print("\(variant.rawValue) (\(variant.model.name), \(variant.metric.rawValue) distance)\(weighted ? ", quality-weighted fusion" : ""): thresholds fitted on the fit people, rates on the eval people")
            for p in protocols {
                let fit = scores(variant, people: fitPeople, measures: measures, k: p.k, weighted: weighted, fusedBoth: p.fusedBoth)
                let eval = scores(variant, people: evalPeople, measures: measures, k: p.k, weighted: weighted, fusedBoth: p.fusedBoth)
                guard !fit.impostor.isEmpty, !eval.impostor.isEmpty, !eval.genuine.isEmpty else {
                    print("  \(p.label): too few comparisons"); continue
                }
                for point in FaceMatchOperatingPoint.allCases {
                    let t = threshold(point.targetFMR, fit.impostor)
                    let c = counts(eval, at: t)
                    let own = counts(eval, at: threshold(point.targetFMR, eval.impostor))
                    print(String(format: "  %@ %@: threshold %.4f (fitted on %d impostor, %d genuine), eval FMR %@, FNMR %@; at the eval people's own point FNMR %@",
                                 p.label, point.rawValue, t, fit.impostor.count, fit.genuine.count,
                                 percent(c.fm, c.imp, digits: 4), percent(c.fnm, c.gen, digits: 2), percent(own.fnm, own.gen, digits: 2)))
                }
            }
        }
    }

    /// Whether an image passes FaceKit's acquisition rule for a selfie frame: a detected face (not
    /// the fallback box) with head pose within `FaceQualityRequirements`' limits (yaw, pitch, roll).
    static func acquired(_ m: Measure) -> Bool {
        let r = FaceQualityRequirements()
        guard !m.fellBack, let p = m.pose else { return false }
        return abs(p.yaw) <= r.maxYaw && abs(p.pitch) <= r.maxPitch && abs(p.roll) <= r.maxRoll
    }

    /// The realised FMR/FNMR of FaceKit's shipped thresholds (`FaceMatchCalibration`) for `variant`'s
    /// model on `people` (every person the calibration was not fitted on), one line per operating
    /// point and protocol: `<prefix> fmr_0.01 image-to-image: FMR … % (a/b), FNMR … % (c/d)`.
    static func shippedLines(_ variant: Variant, people: [String: [String]], measures: [String: Measure], protocols: [ComparisonProtocol],
                             prefix: String) {
        for p in protocols {
            let s = scores(variant, people: people, measures: measures, k: p.k, weighted: false, fusedBoth: p.fusedBoth)
            for point in FaceMatchOperatingPoint.allCases.reversed() {
                let t = FaceMatchCalibration.threshold(point, for: p.kind, model: variant.model).distance
                guard !s.impostor.isEmpty || !s.genuine.isEmpty else { print("\(prefix) \(point.rawValue) \(p.label): no comparisons"); continue }
                let c = counts(s, at: t)
                print("\(prefix) \(point.rawValue) \(p.label): FMR \(percent(c.fm, c.imp, digits: 4)), FNMR \(percent(c.fnm, c.gen, digits: 2))")
            }
        }
    }

    /// The largest |yaw| (degrees, dlib's pose estimate) of the two images of a comparison: the
    /// buckets of `poseLines`.
    static let yawBuckets: [(label: String, range: Range<Double>)] = [("0-15", 0..<15), ("15-25", 15..<25), ("25-40", 25..<40),
                                                                         ("40+", 40..<Double.infinity)]

    /// The image-to-image genuine comparisons of `people` at the shipped `fmr_0.01` threshold, broken
    /// down by head pose and by what the false non-matches are, for each recogniser variant measured
    /// (the alignment check of issue 34: are the 5 points right on turned heads?):
    /// `shipped fmr_0.01 image-to-image by larger |yaw| (reid0095-dlib68): 0-15 7/247 (2.8 %), …`, then
    /// the misses of the shipped variant counted by cause — the centred fallback box (no detection),
    /// 5 points in doubt (dlib's 68 and landmarks-regression-retail-0009 more than 0.2 inter-eye
    /// distances apart on either image), a turned head (larger |yaw| ≥ 25°), or none of these.
    static func poseLines(people: [String: [String]], measures: [String: Measure], variants: [Variant]) {
        let t = FaceMatchCalibration.threshold(.fmr1in10000, for: .imageToImage, model: Variant.shipped.model).distance
        func yaw(_ m: Measure) -> Double { m.pose.map { abs($0.yaw) } ?? .infinity }
        // (reference, probe) of image-to-image: each image against the next of the same person (cyclic).
        let pairs = people.keys.sorted().flatMap { p -> [(Measure, Measure)] in
            let list = people[p]!.compactMap { measures[$0] }
            return list.count < 2 ? [] : list.indices.map { (list[$0], list[($0 + 1) % list.count]) }
        }
        for variant in variants where variant.model == Variant.shipped.model {
            var misses = [Int](repeating: 0, count: yawBuckets.count), totals = misses
            for (a, b) in pairs {
                guard let da = a.descriptors[variant], let db = b.descriptors[variant],
                      let bucket = yawBuckets.firstIndex(where: { $0.range.contains(max(yaw(a), yaw(b))) }) else { continue }
                totals[bucket] += 1
                if ((try? variant.metric.distance(da, db)) ?? .infinity) > t { misses[bucket] += 1 }
            }
            print("shipped fmr_0.01 image-to-image by larger |yaw| (\(variant.rawValue)): " + yawBuckets.indices.map { i in
                String(format: "%@° %d/%d (%.1f %%)", yawBuckets[i].label, misses[i], totals[i], totals[i] == 0 ? 0 : 100 * Double(misses[i]) / Double(totals[i]))
            }.joined(separator: ", "))
        }
        var causes = (fallback: 0, pointsInDoubt: 0, turned: 0, other: 0)
        for (a, b) in pairs {
            guard let da = a.descriptors[.shipped], let db = b.descriptors[.shipped],
                  ((try? Variant.shipped.metric.distance(da, db)) ?? .infinity) > t else { continue }
            if a.fellBack || b.fellBack { causes.fallback += 1 }
            else if max(a.landmarkDisagreement, b.landmarkDisagreement) > 0.2 { causes.pointsInDoubt += 1 }
            else if max(yaw(a), yaw(b)) >= 25 { causes.turned += 1 }
            else { causes.other += 1 }
        }
        print("shipped fmr_0.01 image-to-image false non-matches by cause: no detection (centred box) \(causes.fallback), "
              + "5 points in doubt (dlib 68 vs landmarks-regression-retail-0009 > 0.2 inter-eye) \(causes.pointsInDoubt), "
              + "head turned ≥ 25° \(causes.turned), none of these \(causes.other)")
    }

    /// Whether a file name is an image the bench reads: extension jpg, jpeg or png in any case.
    static func isImageFile(_ name: String) -> Bool {
        ["jpg", "jpeg", "png"].contains((name as NSString).pathExtension.lowercased())
    }

    /// A short stable hash of `text` (FNV-1a 64, hex) for cache file names.
    static func stableHash(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return String(h, radix: 16)
    }
}
