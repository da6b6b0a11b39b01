import FaceKit
import Imaging
import Foundation

/// `idvd bench face --probe-images K`: multi-image face templates on LFW. Each genuine or impostor
/// comparison is one reference image against K probe images of a person (people with ≥ K + 1
/// images), fused at descriptor level (mean, quality-weighted mean) or at score level (mean,
/// quality-weighted mean, minimum of the K distances), beside the one-image protocol. Thresholds
/// are fitted at FMR 0.1 % and 0.01 % on the people of some `pairs.txt` folds (person-disjoint)
/// and FMR/FNMR are reported on the people of the others, with every cross-identity comparison
/// of the report folds as impostors.
enum FaceTemplateBench {
    /// What the bench keeps per LFW image.
    struct Entry: Codable {
        var descriptor: [Float]
        /// `FaceTemplate.qualityWeight` inputs: sharpness (variance of the Laplacian, 128×128 face box) and pose.
        var sharpness: Double
        var pose: HeadPose?
    }

    /// A fusion method of K probe descriptors against one reference descriptor.
    enum Method: String, CaseIterable {
        case descriptorMean = "descriptor mean"
        case descriptorWeighted = "descriptor quality-weighted mean"
        case scoreMean = "score mean distance"
        case scoreWeighted = "score quality-weighted mean distance"
        case scoreMin = "score minimum distance"
    }

    /// The descriptors and quality measures of every image in `names` (cached in `cache`).
    static func entries(engine: FaceEngine, names: [String], imagesDir: URL, threads: Int, cache: URL?, flip: Bool) throws -> [String: Entry] {
        final class Box: @unchecked Sendable { // @unchecked: `store` and `failures` only under `lock` while the workers run
            var store: [String: Entry] = [:]
            var failures = 0
            let lock = NSLock()
        }
        let shared = Box()
        if let cache, let data = try? Data(contentsOf: cache), let cached = try? JSONDecoder().decode([String: Entry].self, from: data) {
            shared.store = cached
        }
        let todo = names.filter { shared.store[$0] == nil }
        if !todo.isEmpty {
            let chunk = max(1, (todo.count + threads - 1) / threads)
            let chunks = stride(from: 0, to: todo.count, by: chunk).map { Array(todo[$0..<min(todo.count, $0 + chunk)]) }
            let wall = Command.measure {
                DispatchQueue.concurrentPerform(iterations: chunks.count) { c in
                    for name in chunks[c] {
                        do {
                            let image = try Image(data: Data(contentsOf: imagesDir.appendingPathComponent(name)))
                            var (descriptor, _) = try FaceBench.lfwDescriptor(engine: engine, image: image)
                            if flip {
                                // Test-time augmentation: the mean with the mirrored image's descriptor.
                                let (mirrored, _) = try FaceBench.lfwDescriptor(engine: engine, image: image.flippedHorizontally())
                                descriptor = try FaceTemplate.fused([descriptor, mirrored]).descriptor
                            }
                            let centre = FacePoint(x: Double(image.width) / 2, y: Double(image.height) / 2)
                            let box = try engine.detect(in: image).min { $0.box.center.distance(to: centre) < $1.box.center.distance(to: centre) }?.box
                                ?? FaceBox(left: Double(image.width) * 0.28, top: Double(image.height) * 0.28,
                                           right: Double(image.width) * 0.72, bottom: Double(image.height) * 0.72)
                            let points = try engine.landmarks(in: image, box: box, count: 68)
                            let face = FaceAnalysis(box: box, confidence: 0, detector: .hog, landmarks5: [], landmarks68: points, embedding: nil)
                            let q = try engine.quality(of: face, in: image, faceCount: 1)
                            shared.lock.withLock { shared.store[name] = Entry(descriptor: descriptor, sharpness: q.sharpness, pose: face.pose) }
                        } catch {
                            shared.lock.withLock { shared.failures += 1 }
                        }
                    }
                }
            }
            print(String(format: "template bench: %d images measured in %.0f s wall (descriptor, 68 landmarks, quality), %d unreadable", todo.count, wall, shared.failures))
            if let cache, let data = try? JSONEncoder().encode(shared.store) { try? data.write(to: cache) }
        }
        return shared.store
    }

    static func distance(_ a: [Float], _ b: [Float]) -> Double {
        var s: Float = 0
        for k in 0..<a.count { let d = a[k] - b[k]; s += d * d }
        return Double(s.squareRoot())
    }

    /// Scores of one reference against one probe set under `method`.
    static func score(_ method: Method, reference: [Float], probes: [[Float]], weights: [Double], fused: (mean: [Float], weighted: [Float])) -> Double {
        switch method {
        case .descriptorMean: return distance(reference, fused.mean)
        case .descriptorWeighted: return distance(reference, fused.weighted)
        case .scoreMean: return probes.map { distance(reference, $0) }.reduce(0, +) / Double(probes.count)
        case .scoreWeighted:
            let total = weights.reduce(0, +)
            return zip(probes, weights).map { distance(reference, $0.0) * $0.1 }.reduce(0, +) / max(1e-12, total)
        case .scoreMin: return probes.map { distance(reference, $0) }.min() ?? .infinity
        }
    }

    struct Side {
        var genuine: [Double] = []
        var impostor: [Double] = []
    }

    /// Threshold with at most `target` FMR on sorted `impostors`.
    static func threshold(_ target: Double, sortedImpostors: [Double]) -> Double {
        let k = Int((target * Double(sortedImpostors.count)).rounded(.down))
        return k < sortedImpostors.count ? sortedImpostors[k].nextDown : sortedImpostors.last!
    }

    static func run(engine: FaceEngine, pairsFile: URL, imagesDir: URL, k: Int, fitFolds: Set<Int>, threads: Int, cache: URL?, flip: Bool) throws {
        let pairs = try FaceBench.readPairs(pairsFile)
        var foldOf: [String: Int] = [:]
        for p in pairs {
            for n in [p.a, p.b] { foldOf[String(n.split(separator: "/")[0])] = p.fold }
        }
        // Every image of every person in the pairs list.
        var images: [String: [String]] = [:]
        for person in foldOf.keys {
            let dir = imagesDir.appendingPathComponent(person)
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".jpg") }.sorted()
            if !files.isEmpty { images[person] = files.map { "\(person)/\($0)" } }
        }
        let all = images.values.flatMap { $0 }.sorted()
        let store = try entries(engine: engine, names: all, imagesDir: imagesDir, threads: threads, cache: cache, flip: flip)
        let folds = Set(foldOf.values)
        let reportFolds = folds.subtracting(fitFolds)
        print("")
        print("LFW multi-image templates (\(all.count) images of \(images.count) people; pairs.txt folds are person-disjoint):")
        print("  thresholds fitted on the people of folds \(fitFolds.sorted().map { "\($0 + 1)" }.joined(separator: ", ")), FMR/FNMR reported on folds \(reportFolds.sorted().map { "\($0 + 1)" }.joined(separator: ", "))")
        if flip { print("  descriptors: mean of each image's and its mirror image's (--flip)") }
        print("  genuine: each image of a person with ≥ K+1 images as reference, against the K images following it (name order, cyclic);")
        print("  impostor: every image of a person against every such K-set of every other person of the same folds")

        // Per split: the K-sets and genuine comparisons.
        func evaluate(k: Int, methods: [Method], folds: Set<Int>) -> [Method: Side] {
            let persons = images.keys.filter { folds.contains(foldOf[$0] ?? -1) }.sorted()
            struct ProbeSet { let person: String; let probes: [[Float]]; let weights: [Double]; let mean: [Float]; let weighted: [Float] }
            func probeSet(_ person: String, _ names: [String]) -> ProbeSet? {
                let es = names.compactMap { store[$0] }
                guard es.count == names.count else { return nil }
                let best = es.map(\.sharpness).max() ?? 0
                let w = es.map { FaceTemplate.qualityWeight(sharpness: $0.sharpness, bestSharpness: best, pose: $0.pose) }
                let d = es.map(\.descriptor)
                guard let mean = try? FaceTemplate.fused(d), let weighted = try? FaceTemplate.fused(d, weights: w) else { return nil }
                return ProbeSet(person: person, probes: d, weights: w, mean: mean.descriptor, weighted: weighted.descriptor)
            }
            var sets: [ProbeSet] = []
            var genuinePairs: [(reference: [Float], set: ProbeSet)] = []
            for person in persons {
                let list = images[person]!
                guard list.count >= k else { continue }
                if list.count == k { if let s = probeSet(person, list) { sets.append(s) }; continue }
                for i in 0..<list.count {
                    let names = (1...k).map { list[(i + $0) % list.count] }
                    guard let s = probeSet(person, names), let r = store[list[i]] else { continue }
                    sets.append(s)
                    genuinePairs.append((r.descriptor, s))
                }
            }
            let references = persons.flatMap { p in images[p]!.compactMap { n in store[n].map { (p, $0.descriptor) } } }
            var out: [Method: Side] = [:]
            for m in methods {
                var side = Side()
                side.genuine = genuinePairs.map { score(m, reference: $0.reference, probes: $0.set.probes, weights: $0.set.weights, fused: ($0.set.mean, $0.set.weighted)) }
                side.impostor.reserveCapacity(sets.count * references.count)
                for s in sets {
                    for (p, r) in references where p != s.person {
                        side.impostor.append(score(m, reference: r, probes: s.probes, weights: s.weights, fused: (s.mean, s.weighted)))
                    }
                }
                side.genuine.sort()
                side.impostor.sort()
                out[m] = side
            }
            return out
        }

        /// Template against template: a K-set fused (descriptor mean) against another, disjoint
        /// K-set of the same person (people with ≥ 2K images: the K images from i and the K after
        /// them, cyclic) or of another person (every K-set of the genuine comparisons against every
        /// other person's).
        func evaluateTemplates(k: Int, folds: Set<Int>) -> Side {
            let persons = images.keys.filter { folds.contains(foldOf[$0] ?? -1) }.sorted()
            var sets: [(person: String, mean: [Float])] = []
            var side = Side()
            func mean(_ names: [String]) -> [Float]? {
                let d = names.compactMap { store[$0]?.descriptor }
                return d.count == names.count ? try? FaceTemplate.fused(d).descriptor : nil
            }
            for person in persons {
                let list = images[person]!
                guard list.count >= 2 * k else { continue }
                for i in 0..<list.count {
                    guard let a = mean((0..<k).map { list[(i + $0) % list.count] }),
                          let b = mean((k..<(2 * k)).map { list[(i + $0) % list.count] }) else { continue }
                    side.genuine.append(distance(a, b))
                    sets.append((person, a))
                }
            }
            for i in sets.indices {
                for j in (i + 1)..<sets.count where sets[i].person != sets[j].person {
                    side.impostor.append(distance(sets[i].mean, sets[j].mean))
                }
            }
            side.genuine.sort()
            side.impostor.sort()
            return side
        }

        func report(_ label: String, fit: Side, eval: Side) {
            guard !fit.impostor.isEmpty, !eval.impostor.isEmpty, !eval.genuine.isEmpty else { print("\(label): too few comparisons"); return }
            for target in [0.001, 0.0001] {
                let t = threshold(target, sortedImpostors: fit.impostor)
                let fm = eval.impostor.prefix { $0 <= t }.count
                let fnm = eval.genuine.filter { $0 > t }.count
                // The report folds' own operating point (a DET reading, fitted in-sample) beside it.
                let own = threshold(target, sortedImpostors: eval.impostor)
                let ownFNMR = Double(eval.genuine.filter { $0 > own }.count) / Double(eval.genuine.count)
                print(String(format: "%@: FMR %@: threshold %.3f (fitted on %d impostor comparisons), eval FMR %.4f %% (%d of %d), FNMR %.2f %% (%d of %d genuine); at the eval folds' own %@ point (%.3f) FNMR %.2f %%",
                             label, target == 0.001 ? "0.1 %" : "0.01 %", t, fit.impostor.count,
                             100 * Double(fm) / Double(eval.impostor.count), fm, eval.impostor.count,
                             100 * Double(fnm) / Double(eval.genuine.count), fnm, eval.genuine.count,
                             target == 0.001 ? "0.1 %" : "0.01 %", own, 100 * ownFNMR))
            }
        }
        let one = (fit: evaluate(k: 1, methods: [.descriptorMean], folds: fitFolds), eval: evaluate(k: 1, methods: [.descriptorMean], folds: reportFolds))
        report("probe-images 1", fit: one.fit[.descriptorMean]!, eval: one.eval[.descriptorMean]!)
        if k > 1 {
            let fit = evaluate(k: k, methods: Method.allCases, folds: fitFolds), eval = evaluate(k: k, methods: Method.allCases, folds: reportFolds)
            for m in Method.allCases { report("probe-images \(k) (\(m.rawValue))", fit: fit[m]!, eval: eval[m]!) }
            report("template \(k) vs template \(k) (descriptor mean)", fit: evaluateTemplates(k: k, folds: fitFolds),
                   eval: evaluateTemplates(k: k, folds: reportFolds))
        }
    }
}
