import FaceKit
import Foundation
import Imaging

/// `idvd face detect IMAGE` and `idvd face compare IMAGE_A IMAGE_B`: JSON on stdout.
extension Command {
    static let face = Command(name: "face", summary: "face detection, landmarks, quality and comparison on image files (JSON)") { args in
        let usage = """
            usage: idvd face detect IMAGE [--detector hog|cnn] [--embedding] [--landmarks]
                   idvd face compare IMAGE_A IMAGE_B [--operating-point fmr_0.1|fmr_0.01] [--threshold D]
                                     [--model reid|dlib] [--detector hog|cnn] [--jitter N]
                   idvd face export-hog-detector OUT

            detect   every face: box (pixels), detector score, head pose (degrees), eye/mouth aspect
                     ratios and quality measures; --landmarks adds the 5 and 68 points,
                     --embedding dlib's 128-d descriptor.
            compare  the largest face of each image: distance, similarity (0–1) and match at the
                     calibrated image-to-image threshold of the operating point (default
                     \(FaceMatchPolicy.fromEnvironment().operatingPoint.rawValue): \(FaceMatchPolicy.fromEnvironment().threshold);
                     IDV_FACE_MATCH_OPERATING_POINT); --threshold / IDV_FACE_MATCH_THRESHOLD
                     set an uncalibrated distance instead. --model reid (default): the face
                     recogniser of new templates (face-reidentification-retail-0095, cosine
                     distance); dlib: dlib's ResNet of version-1/2 templates (Euclidean; --jitter).
            export-hog-detector  writes dlib's get_frontal_face_detector() with dlib's serialize to OUT
                     and prints its SHA-256: how Sources/FaceKit/Models/dlib/frontal_face_detector.dat
                     was made (Models/dlib/SOURCES.md).
            Models are read from IDV_MODELS_DIR or ~/.cache/openidv/models (scripts/bootstrap).
            """
        try CLI.refuseOptionForSubcommand(args.first, command: "face")
        guard let sub = args.first, !["-h", "--help"].contains(sub) else {
            print(usage)
            return args.isEmpty ? 2 : 0
        }
        let (options, positional) = try CLI.parseOptions(Array(args.dropFirst()), flags: ["embedding", "landmarks"],
                                                         valued: ["detector", "operating-point", "threshold", "jitter", "model"], command: "face \(sub)")
        var detection = DetectionOptions()
        if let name = options["detector"] {
            guard let kind = FaceDetectorKind(rawValue: name) else { throw CLIError("--detector must be hog or cnn") }
            detection.detector = kind
        }
        switch sub {
        case "export-hog-detector":
            guard positional.count == 1 else { throw CLIError("export-hog-detector takes OUT\n\n" + usage) }
            print(try FaceEngine.exportHOGDetector(to: URL(fileURLWithPath: positional[0])))
            return 0
        case "detect":
            guard positional.count == 1 else { throw CLIError("detect takes one IMAGE\n\n" + usage) }
            let engine = try FaceEngine.shared()
            let image = try FaceCLI.load(positional[0])
            let analysisOptions = AnalysisOptions(detection: detection, embedding: options["embedding"] != nil)
            let faces = try engine.analyze(image, options: analysisOptions)
            let reports = try faces.map { face in
                FaceCLI.FaceReport(face, quality: try engine.quality(of: face, in: image, faceCount: faces.count),
                                   landmarks: options["landmarks"] != nil)
            }
            try CLI.printJSON(FaceCLI.DetectReport(
                image: .init(width: image.width, height: image.height), detector: detection.detector.rawValue,
                face_count: faces.count, faces: reports,
                message: faces.isEmpty ? "no face found" : nil))
            return 0
        case "compare":
            guard positional.count == 2 else { throw CLIError("compare takes IMAGE_A and IMAGE_B\n\n" + usage) }
            var policy = FaceMatchPolicy.fromEnvironment()
            if let p = options["operating-point"] {
                guard let point = FaceMatchOperatingPoint(rawValue: p) else {
                    throw CLIError("--operating-point is one of \(FaceMatchOperatingPoint.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                policy.operatingPoint = point
            }
            if let t = options["threshold"] {
                guard let value = Double(t), value > 0, value < 2 else { throw CLIError("--threshold must be a distance in (0, 2)") }
                policy.thresholdOverride = value
            }
            let jitter = Int(options["jitter"] ?? "0") ?? -1
            guard (0...100).contains(jitter) else { throw CLIError("--jitter must be 0…100") }
            let model: FaceDescriptorModel
            switch options["model"] ?? "reid" {
            case "reid": model = .faceReidentification0095
            case "dlib": model = .dlibResNetV1
            default: throw CLIError("--model is reid or dlib")
            }
            let engine = try FaceEngine.shared()
            let analysisOptions = AnalysisOptions(detection: detection, landmarks68: model != .dlibResNetV1,
                                                  embedding: model == .dlibResNetV1, jitter: jitter)
            var sides: [(FaceAnalysis, Int, [Float])] = []
            for (label, path) in zip(["IMAGE_A", "IMAGE_B"], positional) {
                let image = try FaceCLI.load(path)
                let faces = try engine.analyze(image, options: analysisOptions)
                guard let first = faces.first else { throw CLIError("no face found in \(label) (\(path))") }
                let descriptor: [Float]
                if model == .dlibResNetV1 {
                    descriptor = first.embedding ?? []
                } else {
                    guard let points = AlignmentPoints(landmarks68: first.landmarks68) else { throw CLIError("no landmarks in \(label) (\(path))") }
                    descriptor = try FaceRecognizer.shared().embedding(in: image, points: points)
                }
                sides.append((first, faces.count, descriptor))
            }
            let result = try FaceMatcher.compare(sides[0].2, sides[1].2, policy: policy, kind: .imageToImage, model: model)
            try CLI.printJSON(FaceCLI.CompareReport(
                distance: result.distance, similarity: result.similarity, match: result.match, threshold: result.threshold,
                model: model.name, metric: model.metric.rawValue, faces_a: sides[0].1, faces_b: sides[1].1,
                box_a: sides[0].0.box, box_b: sides[1].0.box))
            return 0
        default:
            throw CLIError("unknown face subcommand '\(sub)'\n\n" + usage)
        }
    }
}

enum FaceCLI {
    static func load(_ path: String) throws -> Image {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CLIError("cannot read \(path)")
        }
        do { return try Image(data: data) } catch let error as ImageError {
            throw CLIError("\(path): \(error)")
        }
    }

    struct Size: Encodable { let width: Int; let height: Int }

    struct DetectReport: Encodable {
        let image: Size
        let detector: String
        let face_count: Int
        let faces: [FaceReport]
        let message: String?
    }

    struct FaceReport: Encodable {
        let box: FaceBox
        let confidence: Double
        let pose: HeadPose?
        let eye_aspect_ratio: [String: Double]
        let mouth_aspect_ratio: Double
        let quality: Quality
        let issues: [FaceQualityIssue]
        let landmarks5: [FacePoint]?
        let landmarks68: [FacePoint]?
        let embedding: [Float]?

        struct Quality: Encodable {
            let face_width_px: Double, face_height_px: Double, inter_eye_distance_px: Double
            let sharpness_laplacian_variance: Double, brightness_mean_grey: Double, contrast_rms_grey: Double
            let multiple_faces: Bool
        }

        init(_ face: FaceAnalysis, quality q: FaceQuality, landmarks: Bool) {
            box = face.box
            confidence = face.confidence
            pose = face.pose
            eye_aspect_ratio = ["right": face.rightEyeAspectRatio, "left": face.leftEyeAspectRatio]
            mouth_aspect_ratio = face.mouthAspectRatio
            quality = Quality(face_width_px: q.faceWidth, face_height_px: q.faceHeight, inter_eye_distance_px: q.interEyeDistance,
                              sharpness_laplacian_variance: q.sharpness, brightness_mean_grey: q.brightness,
                              contrast_rms_grey: q.contrast, multiple_faces: q.multipleFaces)
            issues = q.issues()
            landmarks5 = landmarks ? face.landmarks5 : nil
            landmarks68 = landmarks ? face.landmarks68 : nil
            embedding = face.embedding
        }
    }

    struct CompareReport: Encodable {
        let distance: Double
        let similarity: Double
        let match: Bool
        let threshold: Double
        let model: String
        let metric: String
        let faces_a: Int
        let faces_b: Int
        let box_a: FaceBox
        let box_b: FaceBox
    }
}

// MARK: - idvd bench face

extension Benchmark {
    static let face = Benchmark(name: "face", summary: "face engine: per-stage times; LFW matching (FNMR at FMR, fit/eval split, shipped thresholds)", hasUsage: true) { args in
        let (o, _) = try CLI.parseOptions(args, flags: ["stages-only", "lfw-only", "help", "with-pairs", "weighted"],
                                          valued: ["pairs", "images", "limit", "threads", "repeat", "cache", "stage-image", "probe-images",
                                                   "split", "measure-cache", "variants"], takesArguments: false, command: "bench face")
        if o["help"] != nil {
            print("""
                usage: idvd bench face [--pairs FILE] [--images DIR] [--probe-images K,…] [--variants LIST] [--split FILE]
                                       [--threads N] [--measure-cache FILE] [--weighted] [--stages-only | --lfw-only]
                                       [--repeat N] [--stage-image FILE] [--with-pairs [--limit N] [--cache FILE]]
                  --pairs/--images  an LFW-format pairs list and image folder (default ../shared/testdata/lfw); every
                                    image of every person the list names is measured once (cached)
                  --probe-images K  fused(K)-to-image protocols beside image-to-image, a list (default 3,5,10; 0 = none)
                  --variants LIST   matchers to report: \(FaceRecognitionBench.Variant.allCases.map(\.rawValue).joined(separator: ", ")), or all
                                    (default \(FaceRecognitionBench.Variant.shipped.rawValue),dlib)
                  --split FILE      the fixed fit/eval person split (default bench/lfw-split.txt, when present); people
                                    it does not name count as unseen
                  --threads N       threads measuring images (default 1; stages always use one)
                  --measure-cache F where per-image measures are kept (default ~/.cache/openidv/bench/face-<models>-<set>.bin)
                  --weighted        fuse with FaceTemplate.qualityWeight (default: plain mean)
                  --with-pairs      also the View-2 pairs verification of dlib's descriptor (--limit, --cache)
                  --stage-image F   the photo (one face) of the per-stage timing (default Tests/Fixtures/faces/obama-480p.jpg
                                    under the working directory; when that is absent the timing is skipped)
                Prints, per matcher and protocol, thresholds fitted at FMR 0.1 % and 0.01 % on the fit people with FMR and
                FNMR on the eval people, then FaceKit's shipped thresholds' realised FMR/FNMR on every person they were not
                fitted on ("shipped fmr_0.01 image-to-image: FMR … % (a/b), FNMR … % (c/d)").
                """)
            return 0
        }
        let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        // The per-stage timing image: an explicit --stage-image must exist; the default one lies in
        // the repository's working copy, and elsewhere the timing is skipped (the accuracy figures
        // do not need it).
        var stageImage: URL?, stageSkipped: String?
        if o["lfw-only"] == nil {
            if let path = o["stage-image"] {
                guard FileManager.default.fileExists(atPath: path) else { throw CLIError("--stage-image \(path): no such file") }
                stageImage = URL(fileURLWithPath: path)
            } else {
                let fixture = root.appendingPathComponent("Tests/Fixtures/faces/obama-480p.jpg")
                if FileManager.default.fileExists(atPath: fixture.path) {
                    stageImage = fixture
                } else if o["stages-only"] != nil {
                    throw CLIError("no stage image: \(fixture.path) is not here (run from the repository root, or give --stage-image FILE)")
                } else {
                    stageSkipped = "per-stage timing skipped: its default image Tests/Fixtures/faces/obama-480p.jpg is not under \(root.path) "
                        + "(run from the repository root, or give --stage-image FILE, a photo of one face)"
                }
            }
        }
        // Every other argument is checked before the models are loaded.
        var lfwRun: (() throws -> Void)?
        let engine = try FaceEngine.shared()
        if o["stages-only"] == nil {
            let lfw = root.appendingPathComponent("../shared/testdata/lfw").standardizedFileURL
            let pairs = o["pairs"].map { URL(fileURLWithPath: $0) } ?? lfw.appendingPathComponent("pairs.txt")
            let images = o["images"].map { URL(fileURLWithPath: $0) } ?? lfw.appendingPathComponent("images")
            let threads = max(1, Int(o["threads"] ?? "1") ?? 1)
            guard FileManager.default.fileExists(atPath: pairs.path) else {
                throw CLIError("pairs list \(pairs.path) not found (give --pairs FILE --images DIR, or --stages-only)")
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: images.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CLIError("image folder \(images.path) not found (give --images DIR, the folder of one sub-folder per person)")
            }
            let ks = try (o["probe-images"] ?? "3,5,10").split(separator: ",").map { s -> Int in
                guard let k = Int(s), (0...20).contains(k) else { throw CLIError("--probe-images is a list of 0…20, e.g. 3,5,10") }
                return k
            }.filter { $0 > 1 }   // 1 (image-to-image) is always reported, once
            let variantNames = (o["variants"] ?? "\(FaceRecognitionBench.Variant.shipped.rawValue),dlib")
            let variants = try variantNames == "all" ? FaceRecognitionBench.Variant.allCases : variantNames.split(separator: ",").map { s in
                guard let v = FaceRecognitionBench.Variant(rawValue: String(s)) else {
                    throw CLIError("--variants: unknown '\(s)' (\(FaceRecognitionBench.Variant.allCases.map(\.rawValue).joined(separator: ", ")), all)")
                }
                return v
            }
            _ = try FaceBench.readPairs(pairs)   // a malformed list is refused before anything is measured
            lfwRun = {
                if o["with-pairs"] != nil {
                    try FaceBench.lfw(engine: engine, pairsFile: pairs, imagesDir: images, limit: Int(o["limit"] ?? "") ?? Int.max,
                                      threads: threads, cache: o["cache"].map { URL(fileURLWithPath: $0) })
                }
                try FaceRecognitionBench.run(engine: engine, pairsFile: pairs, imagesDir: images,
                                             splitFile: URL(fileURLWithPath: o["split"] ?? "bench/lfw-split.txt"), splitIsDefault: o["split"] == nil,
                                             ks: [1] + Array(Set(ks)).sorted(),
                                             variants: variants, threads: threads, cacheFile: o["measure-cache"].map { URL(fileURLWithPath: $0) },
                                             weighted: o["weighted"] != nil)
            }
        }
        try engine.preload()
        setBLASThreads(1)
        if let stageSkipped { print(stageSkipped) }
        if let stageImage {
            try FaceBench.stages(engine: engine, source: stageImage, repeats: Int(o["repeat"] ?? "10") ?? 10)
        }
        try lfwRun?()
        return 0
    }
}

enum FaceBench {
    /// CPU seconds the calling thread spends in `body` (CLOCK_THREAD_CPUTIME_ID): on a shared
    /// machine this is the one-core cost, unaffected by other processes' load.
    static func cpu(_ body: () throws -> Void) rethrows -> Double {
        var a = timespec(), b = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a)
        try body()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b)
        return Double(b.tv_sec - a.tv_sec) + Double(b.tv_nsec - a.tv_nsec) / 1e9
    }

    static func ms(_ seconds: Double) -> String { String(format: "%8.1f ms", seconds * 1000) }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? 0 : s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Per-stage medians on a 640×480 and a 1920×1080 JPEG made from `source`.
    static func stages(engine: FaceEngine, source: URL, repeats: Int) throws {
        let photo = try Image(data: Data(contentsOf: source))
        // 640×480: a centre crop (4:3) scaled to 640×480; 1920×1080: a 16:9 centre crop scaled up or down.
        func frame(_ w: Int, _ h: Int) throws -> Data {
            let aspect = Double(w) / Double(h)
            var cw = photo.width, ch = Int(Double(photo.width) / aspect)
            if ch > photo.height { ch = photo.height; cw = Int(Double(ch) * aspect) }
            let crop = try photo.cropped(PixelRect(x: (photo.width - cw) / 2, y: (photo.height - ch) / 2, width: cw, height: ch))
            return try crop.resized(width: w, height: h).jpegData(quality: 90)
        }
        print("face engine per-stage CPU time on one core (thread CPU clock; OpenBLAS 1 thread), median of \(repeats) runs, dlib \(dlibVersion)")
        print("source: \(source.lastPathComponent) (\(photo.width)×\(photo.height)), re-encoded as JPEG q90 at each size")
        let recognizer = try FaceRecognizer.shared()
        print("size        decode   detect HOG  landmarks5 landmarks68  embed dlib  embed 0095   total(HOG)  detect CNN")
        print("(total = decode + detect + 68 landmarks + 0095 descriptor: what a new template's image costs)")
        for (w, h) in [(640, 480), (1920, 1080)] {
            let jpeg = try frame(w, h)
            var t: [String: [Double]] = [:]
            for i in 0..<repeats {
                var image: Image?
                t["decode", default: []].append(try cpu { image = try Image(data: jpeg) })
                guard let image else { continue }
                var faces: [DetectedFace] = []
                t["detect", default: []].append(try cpu { faces = try engine.detect(in: image) })
                guard let face = faces.first else { throw CLIError("no face in the \(w)×\(h) stage image") }
                var five: [FacePoint] = []
                t["lm5", default: []].append(try cpu { five = try engine.landmarks(in: image, box: face.box, count: 5) })
                var points68: [FacePoint] = []
                t["lm68", default: []].append(try cpu { points68 = try engine.landmarks(in: image, box: face.box, count: 68) })
                t["embed", default: []].append(try cpu { _ = try engine.embedding(in: image, landmarks: five) })
                guard let points = AlignmentPoints(landmarks68: points68) else { throw CLIError("no 68 landmarks in the \(w)×\(h) stage image") }
                t["reid", default: []].append(try cpu { _ = try recognizer.embedding(in: image, points: points) })
                if i < max(1, repeats / 3) {
                    t["cnn", default: []].append(try cpu { _ = try engine.detect(in: image, options: .init(detector: .cnn)) })
                }
            }
            let total = ["decode", "detect", "lm68", "reid"].reduce(0.0) { $0 + median(t[$1] ?? []) }
            print(String(format: "%4d×%-4d", w, h), ms(median(t["decode"]!)), ms(median(t["detect"]!)), ms(median(t["lm5"]!)),
                  ms(median(t["lm68"]!)), ms(median(t["embed"]!)), ms(median(t["reid"]!)), "  ", ms(total), "  ", ms(median(t["cnn"]!)))
        }
        let jpeg1080 = try frame(1920, 1080)
        print(String(format: "wall clock of one whole 1920×1080 decode+detect+landmarks+embed now: %.1f ms (other processes' load shows here, not above)", Command.measure {
            _ = try? engine.analyze(Image(data: jpeg1080))
        } * 1000))
        // Concurrency: the same 640×480 analysis from 1 and 2 threads (per-thread worker pool).
        let jpeg480 = try frame(640, 480)
        let image480 = try Image(data: jpeg480)
        let n = max(4, repeats)
        var load = [Double](repeating: 0, count: 3)
        getloadavg(&load, 3)
        var rates: [String] = []
        for threads in [1, 2] {
            let wall = Command.measure {
                DispatchQueue.concurrentPerform(iterations: threads) { _ in
                    for _ in 0..<n { _ = try? engine.analyze(image480) }
                }
            }
            rates.append(String(format: "%d thread(s): %.1f images/s", threads, Double(n * threads) / wall))
        }
        print("throughput, full analysis of the 640×480 frame (wall clock, load average \(String(format: "%.1f", load[0])) on \(ProcessInfo.processInfo.activeProcessorCount) cores): " + rates.joined(separator: ", ") + "; \(engine.workerCount) worker copies")
        let scale1080 = DetectionOptions().workingScale(width: 1920, height: 1080)
        print(String(format: "(detection runs on a working copy: 640×480 at ×%.2f, 1920×1080 at ×%.2f; landmarks and the face descriptor on the full image)",
                     DetectionOptions().workingScale(width: 640, height: 480), scale1080))
        print("")
    }

    struct Pair { let a: String; let b: String; let same: Bool; let fold: Int }

    /// Reads an LFW pairs list (`pairs.txt`, `pairsDevTrain.txt`, `pairsDevTest.txt`), fields
    /// separated by tabs or spaces, blank lines skipped:
    /// - line 1, the header: "folds n" (View 2: folds of n same-person then n different-person lines)
    ///   or "n" (View 1), positive integers;
    /// - a same-person pair "name i j" and a different-person pair "name1 i name2 j", where i and j
    ///   are positive image numbers (`name/name_000i.jpg` under the image folder) and names hold no "/".
    /// Returns the pairs in file order, with their fold (0-based; 0 for a View-1 list). Throws
    /// `CLIError` when the file cannot be read or is empty, and on the first line of another shape,
    /// naming its line number (1-based) and its text.
    static func readPairs(_ url: URL) throws -> [Pair] {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw CLIError("cannot read pairs list \(url.path)") }
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated().map { (number: $0.offset + 1, text: $0.element) }
            .filter { !$0.text.allSatisfy(\.isWhitespace) }
        guard let header = lines.first else { throw CLIError("empty pairs list \(url.path)") }
        func refuse(_ line: (number: Int, text: Substring), _ why: String) -> CLIError {
            CLIError("pairs list \(url.path), line \(line.number): \(why), not '\(line.text.prefix(80))'")
        }
        func fields(_ line: Substring) -> [String] { line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) }
        let head = fields(header.text).map { Int($0) }
        guard (1...2).contains(head.count), head.allSatisfy({ ($0 ?? 0) > 0 }) else {
            throw refuse(header, "expected the header \"folds n\" or \"n\" (positive integers)")
        }
        let perFold = head.last!!
        func number(_ s: String) -> Int? { Int(s).flatMap { $0 > 0 ? $0 : nil } }
        func person(_ s: String) -> String? { s.contains("/") || s == "." || s == ".." ? nil : s }
        func file(_ name: String, _ n: Int) -> String { "\(name)/\(name)_\(String(format: "%04d", n)).jpg" }
        var pairs: [Pair] = []
        for (i, line) in lines.dropFirst().enumerated() {
            let f = fields(line.text)
            let fold = i / (2 * perFold)
            if f.count == 3, let name = person(f[0]), let a = number(f[1]), let b = number(f[2]) {
                pairs.append(Pair(a: file(name, a), b: file(name, b), same: true, fold: fold))
            } else if f.count == 4, let n1 = person(f[0]), let a = number(f[1]), let n2 = person(f[2]), let b = number(f[3]) {
                pairs.append(Pair(a: file(n1, a), b: file(n2, b), same: false, fold: fold))
            } else {
                throw refuse(line, "expected \"name i j\" (same person) or \"name1 i name2 j\" (different people), i and j positive image numbers")
            }
        }
        return pairs
    }

    final class Store: @unchecked Sendable {   // @unchecked: written under `lock` while the workers run, read after
        let lock = NSLock()
        var descriptors: [String: [Float]] = [:]
        var fallbacks = 0
        var failures: [String] = []
        var seconds = 0.0
    }

    /// The descriptor of the labelled face of an LFW image: the detected face nearest the centre;
    /// if none, detection again with a lowered threshold; if still none, a centred box covering
    /// the middle 44 % (where deep-funnelled LFW puts the face). Returns (descriptor, fell back).
    static func lfwDescriptor(engine: FaceEngine, image: Image) throws -> ([Float], Bool) {
        let centre = FacePoint(x: Double(image.width) / 2, y: Double(image.height) / 2)
        var detections = try engine.detect(in: image)
        if detections.isEmpty { detections = try engine.detect(in: image, options: .init(adjustThreshold: -0.5)) }
        let fellBack = detections.isEmpty
        let box = detections.min { $0.box.center.distance(to: centre) < $1.box.center.distance(to: centre) }?.box
            ?? FaceBox(left: Double(image.width) * 0.28, top: Double(image.height) * 0.28,
                       right: Double(image.width) * 0.72, bottom: Double(image.height) * 0.72)
        let five = try engine.landmarks(in: image, box: box, count: 5)
        return (try engine.embedding(in: image, landmarks: five), fellBack)
    }

    static func lfw(engine: FaceEngine, pairsFile: URL, imagesDir: URL, limit: Int, threads: Int, cache: URL?) throws {
        guard FileManager.default.fileExists(atPath: pairsFile.path) else {
            print("LFW: pairs list \(pairsFile.path) not found; skipped (give --pairs FILE --images DIR)")
            return
        }
        let all = try readPairs(pairsFile)
        let usable = Array(all.filter {
            FileManager.default.fileExists(atPath: imagesDir.appendingPathComponent($0.a).path)
                && FileManager.default.fileExists(atPath: imagesDir.appendingPathComponent($0.b).path)
        }.prefix(limit))
        let names = Array(Set(usable.flatMap { [$0.a, $0.b] })).sorted()
        print("LFW verification: \(usable.count) of \(all.count) pairs usable (\(usable.filter(\.same).count) same, \(usable.filter { !$0.same }.count) different), \(names.count) images, \(threads) thread(s)")

        let store = Store()
        if let cache, let data = try? Data(contentsOf: cache), let cached = try? JSONDecoder().decode([String: [Float]].self, from: data) {
            store.descriptors = cached
        }
        let todo = names.filter { store.descriptors[$0] == nil }
        let wall = Command.measure {
            let chunks = stride(from: 0, to: todo.count, by: max(1, (todo.count + threads - 1) / threads)).map {
                Array(todo[$0..<min(todo.count, $0 + max(1, (todo.count + threads - 1) / threads))])
            }
            DispatchQueue.concurrentPerform(iterations: chunks.count) { c in
                for name in chunks[c] {
                    var result: ([Float], Bool)?
                    let t = (try? cpu {
                        let image = try Image(data: Data(contentsOf: imagesDir.appendingPathComponent(name)))
                        result = try lfwDescriptor(engine: engine, image: image)
                    }) ?? 0
                    store.lock.withLock {
                        if let (d, fell) = result { store.descriptors[name] = d; if fell { store.fallbacks += 1 } } else { store.failures.append(name) }
                        store.seconds += t
                    }
                }
            }
        }
        if !todo.isEmpty {
            print(String(format: "descriptors: %d images in %.1f s wall; %.1f ms CPU per image (decode + HOG detect + 5 landmarks + embed); %d without a detected face (centre box used), %d unreadable",
                         todo.count, wall, store.seconds / Double(todo.count) * 1000, store.fallbacks, store.failures.count)
                  + (store.failures.isEmpty ? "" : ": " + FaceRecognitionBench.firstFew(store.failures.sorted())))
        } else {
            print("descriptors: all \(names.count) from cache \(cache?.path ?? "")")
        }
        if let cache, !todo.isEmpty, let data = try? JSONEncoder().encode(store.descriptors) { try? data.write(to: cache) }

        func dist(_ a: String, _ b: String) -> Double? {
            guard let x = store.descriptors[a], let y = store.descriptors[b] else { return nil }
            return try? FaceMatcher.distance(x, y)
        }
        let scored = usable.compactMap { p in dist(p.a, p.b).map { (p, $0) } }
        let genuine = scored.filter { $0.0.same }.map(\.1).sorted()
        let impostor = scored.filter { !$0.0.same }.map(\.1).sorted()
        guard !genuine.isEmpty, !impostor.isEmpty else { print("LFW: not enough scored pairs"); return }

        // Accuracy: k-fold cross-validation as in the LFW protocol (threshold fitted on the other folds).
        func accuracy(_ items: [(Pair, Double)], _ t: Double) -> Double {
            Double(items.filter { ($0.1 <= t) == $0.0.same }.count) / Double(max(1, items.count))
        }
        func bestThreshold(_ items: [(Pair, Double)]) -> Double {
            let candidates = items.map(\.1).sorted()
            var best = (acc: -1.0, t: 0.6)
            for t in candidates { let a = accuracy(items, t); if a > best.acc { best = (a, t) } }
            return best.t
        }
        let folds = Set(scored.map(\.0.fold)).sorted()
        var foldAcc: [Double] = [], foldT: [Double] = []
        if folds.count > 1 {
            for f in folds {
                let t = bestThreshold(scored.filter { $0.0.fold != f })
                foldT.append(t)
                foldAcc.append(accuracy(scored.filter { $0.0.fold == f }, t))
            }
        }
        let meanAcc = foldAcc.isEmpty ? accuracy(scored, bestThreshold(scored)) : foldAcc.reduce(0, +) / Double(foldAcc.count)
        let sdAcc = foldAcc.count > 1 ? (foldAcc.map { ($0 - meanAcc) * ($0 - meanAcc) }.reduce(0, +) / Double(foldAcc.count - 1)).squareRoot() : 0
        // dlib's configured image-to-image line (this section measures dlib's descriptor).
        let configured = FaceMatchPolicy.fromEnvironment().threshold(for: .imageToImage, model: .dlibResNetV1)
        if foldT.isEmpty {
            let t: Double = bestThreshold(scored)
            print(String(format: "accuracy (one fold: best threshold %.3f fitted on these pairs, in-sample): %.2f %%   [dlib's published figure for this model: 99.38 %%]",
                         t, meanAcc * 100))
        } else {
            let meanT: Double = foldT.reduce(0, +) / Double(foldT.count)
            print(String(format: "accuracy (%d-fold cross-validated threshold, mean %.3f): %.2f %% ± %.2f   [dlib's published figure for this model: 99.38 %%]",
                         folds.count, meanT, meanAcc * 100, sdAcc * 100))
        }
        print(String(format: "accuracy at the configured threshold %.3f: %.2f %%; at dlib's 0.6: %.2f %%",
                     configured, accuracy(scored, configured) * 100, accuracy(scored, 0.6) * 100))
        print(String(format: "distances: genuine median %.3f (95th pct %.3f), impostor median %.3f (5th pct %.3f)",
                     median(genuine), genuine[Int(Double(genuine.count - 1) * 0.95)], median(impostor), impostor[Int(Double(impostor.count - 1) * 0.05)]))

        // Extended impostor set: every two images of different people among the pair images.
        let ids = names.filter { store.descriptors[$0] != nil }
        let person = ids.map { String($0.split(separator: "/").first ?? "") }
        let vecs = ids.map { store.descriptors[$0]! }
        var extImpostor: [Double] = []
        var extGenuine: [Double] = []
        extImpostor.reserveCapacity(ids.count * ids.count / 2)
        for i in 0..<vecs.count {
            for j in (i + 1)..<vecs.count {
                var s: Float = 0
                let a = vecs[i], b = vecs[j]
                for k in 0..<a.count { let d = a[k] - b[k]; s += d * d }
                if person[i] == person[j] { extGenuine.append(Double(s.squareRoot())) } else { extImpostor.append(Double(s.squareRoot())) }
            }
        }
        extImpostor.sort()
        extGenuine.sort()

        /// Threshold with at most `target` FMR on `impostors`, and the FNMR of `genuines` there.
        func operatingPoint(_ target: Double, impostors: [Double], genuines: [Double]) -> (t: Double, fmr: Double, fnmr: Double, resolvable: Bool) {
            let k = Int((target * Double(impostors.count)).rounded(.down))
            let t = k < impostors.count ? impostors[k].nextDown : impostors.last!
            let fm = impostors.prefix { $0 <= t }.count
            let fnm = genuines.filter { $0 > t }.count
            return (t, Double(fm) / Double(impostors.count), Double(fnm) / Double(genuines.count), target * Double(impostors.count) >= 1)
        }
        print("FNMR at fixed FMR (ISO/IEC 19795-1):")
        for target in [0.001, 0.0001] {
            let std = operatingPoint(target, impostors: impostor, genuines: genuine)
            let ext = operatingPoint(target, impostors: extImpostor, genuines: genuine)
            let extAll = operatingPoint(target, impostors: extImpostor, genuines: extGenuine)
            print(String(format: "  FMR %.2f %%: View-2 pairs (%d impostors%@): threshold %.3f, FMR %.3f %%, FNMR %.2f %%",
                         target * 100, impostor.count, std.resolvable ? "" : ", too few to resolve this FMR; shown at FMR = 0",
                         std.t, std.fmr * 100, std.fnmr * 100))
            print(String(format: "              all cross-person pairs (%d impostors): threshold %.3f, FMR %.4f %%, FNMR %.2f %% (View-2 genuine), %.2f %% (all %d same-person pairs)",
                         extImpostor.count, ext.t, ext.fmr * 100, ext.fnmr * 100, extAll.fnmr * 100, extGenuine.count))
        }
        for t in [configured, 0.6] {
            let fmr = Double(extImpostor.prefix { $0 <= t }.count) / Double(extImpostor.count)
            let fnmr = Double(genuine.filter { $0 > t }.count) / Double(genuine.count)
            print(String(format: "at threshold %.3f%@: FMR %.4f %% (all cross-person pairs), FNMR %.2f %% (View-2 genuine pairs), accuracy %.2f %% (View-2)",
                         t, t == configured ? " (configured)" : " (dlib's)", fmr * 100, fnmr * 100, accuracy(scored, t) * 100))
        }
    }
}
