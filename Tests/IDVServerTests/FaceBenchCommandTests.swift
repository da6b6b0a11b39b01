import Foundation
import IDVServerTestSupport
import IDVTestSupport
import XCTest

/// `idvd bench face --pairs F --images D` through the real binary on a tiny LFW-format set made
/// from the repository's face fixtures (3 people, 8 images; a second or two of measuring per run):
/// the shipped `fmr_0.01` image-to-image line with the set's comparison counts, the measure cache
/// keyed by each image's bytes, runs from outside the repository, and the checks of its input.
final class FaceBenchCommandTests: XCTestCase {
    /// A temp folder holding `images/` (Katie_Hill 3 images, one `.JPG`; Aoc 3, one `.jpeg`; Obama 2)
    /// and `pairs.txt` (View-2 header, two same-person and two different-person lines). Image-to-image
    /// on it: 8 genuine comparisons (each image against the next of its person) and 42 impostor ones
    /// (each of the 8 against every image of the other people: 3×5 + 3×5 + 2×6).
    var dir: URL!
    var images: URL { dir.appendingPathComponent("images") }
    var pairs: URL { dir.appendingPathComponent("pairs.txt") }
    var cache: URL { dir.appendingPathComponent("measures.bin") }

    static let fixtures = IDVDBinary.packageRoot.appendingPathComponent("Tests/Fixtures")
    static let set: [(person: String, file: String, from: String)] = [
        ("Katie_Hill", "Katie_Hill_0001.jpg", "selfie/katie_live/frame_001.jpg"),
        ("Katie_Hill", "Katie_Hill_0002.JPG", "selfie/katie_live/frame_020.jpg"),
        ("Katie_Hill", "Katie_Hill_0003.jpg", "selfie/katie_portrait.jpg"),
        ("Aoc", "Aoc_0001.jpg", "selfie/aoc_live/frame_001.jpg"),
        ("Aoc", "Aoc_0002.jpeg", "selfie/aoc_live/frame_015.jpg"),
        ("Aoc", "Aoc_0003.jpg", "selfie/aoc_live/frame_030.jpg"),
        ("Obama", "Obama_0001.jpg", "faces/obama-480p.jpg"),
        ("Obama", "Obama_0002.jpg", "faces/obama_small.jpg"),
    ]
    static let pairsList = "1\t2\nKatie_Hill\t1\t2\nAoc\t1\t3\nKatie_Hill\t1\tObama\t2\nAoc\t2\tObama\t1\n"

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-face-\(UUID().uuidString)")
        for (person, file, from) in Self.set {
            let folder = images.appendingPathComponent(person)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // A fixture that is missing fails the test here (copyItem throws).
            try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent(from), to: folder.appendingPathComponent(file))
        }
        try Data(Self.pairsList.utf8).write(to: pairs)
    }

    override func tearDownWithError() throws {
        if let dir { try? FileManager.default.removeItem(at: dir) }
    }

    /// Runs `idvd <args>` in `directory` (default: the temp folder, outside the repository).
    func idvd(_ args: [String], in directory: URL? = nil) throws -> (status: Int32, out: String, err: String) {
        let r = try IDVD.run(args, in: directory ?? dir)
        return (r.status, r.output, r.errors)
    }

    func bench(_ extra: [String] = [], pairs: URL? = nil, cache: URL? = nil) throws -> (status: Int32, out: String, err: String) {
        try idvd(["bench", "face", "--lfw-only", "--probe-images", "1", "--pairs", (pairs ?? self.pairs).path, "--images", images.path,
                  "--measure-cache", (cache ?? self.cache).path] + extra)
    }

    /// The lines of `out` that start with `prefix`.
    func lines(_ out: String, _ prefix: String) -> [String] {
        out.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    /// The shipped line in its documented format, with the set's counts, printed once (`--probe-images 1`
    /// used to print the image-to-image lines twice); `.JPG` and `.jpeg` images are counted. Then an
    /// image replaced under the same name is measured again: the figures change to what a fresh
    /// cache gives, not the stale measure's.
    func testShippedLineCountsAndAChangedImageIsMeasuredAgain() throws {
        let first = try bench()
        XCTAssertEqual(first.status, 0, first.out + first.err)
        XCTAssertTrue(first.out.contains("measured 8 images in "), first.out)
        XCTAssertTrue(first.out.contains("; 0 unreadable\n"), first.out)
        XCTAssertTrue(first.out.contains("face matching on 8 images of 3 people (pairs.txt, \(images.path))"), first.out)
        XCTAssertEqual(lines(first.out, "shipped fmr_0.01 image-to-image:"),
                       ["shipped fmr_0.01 image-to-image: FMR 0.0000 % (0/42), FNMR 0.00 % (0/8)"], first.out)
        XCTAssertEqual(lines(first.out, "shipped fmr_0.1 image-to-image:").count, 1, first.out)

        let again = try bench()
        XCTAssertEqual(again.status, 0, again.out + again.err)
        XCTAssertTrue(again.out.contains("measures of all 8 readable images from the cache \(cache.path)"), again.out)
        XCTAssertFalse(again.out.contains("measured "), again.out)
        XCTAssertEqual(lines(again.out, "shipped fmr_0.01 image-to-image:"), lines(first.out, "shipped fmr_0.01 image-to-image:"))

        // Katie_Hill_0001.jpg becomes a frame of Aoc's clip that is not in the set.
        let replaced = images.appendingPathComponent("Katie_Hill/Katie_Hill_0001.jpg")
        try FileManager.default.removeItem(at: replaced)
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("selfie/aoc_live/frame_010.jpg"), to: replaced)
        let changed = try bench()
        XCTAssertEqual(changed.status, 0, changed.out + changed.err)
        XCTAssertTrue(changed.out.contains("1 of 8 images changed since they were cached (their old measures dropped): Katie_Hill/Katie_Hill_0001.jpg\n"),
                      changed.out)
        XCTAssertTrue(changed.out.contains("measured 1 images in "), changed.out)
        // Katie_Hill_0001 now matches Aoc's 3 images both ways (6 false matches) and misses Katie's
        // other two (2 false non-matches).
        XCTAssertEqual(lines(changed.out, "shipped fmr_0.01 image-to-image:"),
                       ["shipped fmr_0.01 image-to-image: FMR 14.2857 % (6/42), FNMR 25.00 % (2/8)"], changed.out)
        let fresh = try bench(cache: dir.appendingPathComponent("fresh.bin"))
        XCTAssertEqual(fresh.status, 0, fresh.out + fresh.err)
        XCTAssertTrue(fresh.out.contains("measured 8 images in "), fresh.out)
        XCTAssertEqual(lines(fresh.out, "shipped fmr_0.01 image-to-image:"), lines(changed.out, "shipped fmr_0.01 image-to-image:"))
    }

    /// From a folder outside the repository: the per-stage timing (whose default image lies in the
    /// repository) is skipped with one line saying how to get it, and the accuracy figures follow;
    /// an explicit --stage-image that does not exist is an error before anything is measured;
    /// `bench liveness --help` prints its help and exits 0.
    func testRunsOutsideTheRepository() throws {
        let r = try idvd(["bench", "face", "--probe-images", "0", "--pairs", pairs.path, "--images", images.path, "--measure-cache", cache.path])
        XCTAssertEqual(r.status, 0, r.out + r.err)
        XCTAssertEqual(lines(r.out, "per-stage timing skipped:"),
                       ["per-stage timing skipped: its default image Tests/Fixtures/faces/obama-480p.jpg is not under \(dir.path) "
                        + "(run from the repository root, or give --stage-image FILE, a photo of one face)"], r.out)
        XCTAssertEqual(lines(r.out, "shipped fmr_0.01 image-to-image:"),
                       ["shipped fmr_0.01 image-to-image: FMR 0.0000 % (0/42), FNMR 0.00 % (0/8)"], r.out)
        XCTAssertEqual(r.err, "")

        let missing = dir.appendingPathComponent("no-such-photo.jpg").path
        let explicit = try idvd(["bench", "face", "--stage-image", missing, "--pairs", pairs.path, "--images", images.path,
                                 "--measure-cache", dir.appendingPathComponent("other.bin").path])
        XCTAssertEqual(explicit.status, 2, explicit.out + explicit.err)
        XCTAssertTrue(explicit.err.contains("--stage-image \(missing): no such file"), explicit.err)
        XCTAssertEqual(explicit.out, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("other.bin").path))

        let help = try idvd(["bench", "liveness", "--help"])
        XCTAssertEqual(help.status, 0, help.out + help.err)
        XCTAssertTrue(help.out.hasPrefix("usage: idvd bench liveness "), help.out)
        XCTAssertEqual(help.err, "")
    }

    /// A pairs line of no LFW form is refused with its line number before anything is measured; the
    /// shared LFW pairs.txt (header, 3- and 4-field lines) is accepted.
    func testMalformedPairsLineIsRefusedWithItsLineNumber() throws {
        let bad = dir.appendingPathComponent("bad-pairs.txt")
        try Data("1\t2\nKatie_Hill\t1\t2\n\ngarbage line here\nAoc\t2\tObama\t1\n".utf8).write(to: bad)
        let r = try bench(pairs: bad)
        XCTAssertEqual(r.status, 2, r.out + r.err)
        XCTAssertTrue(r.err.contains("pairs list \(bad.path), line 4: expected \"name i j\" (same person) or \"name1 i name2 j\" "
                                     + "(different people), i and j positive image numbers, not 'garbage line here'"), r.err)
        XCTAssertEqual(r.out, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache.path))

        let badHeader = dir.appendingPathComponent("no-header.txt")
        try Data("Katie_Hill\t1\t2\n".utf8).write(to: badHeader)
        let h = try bench(pairs: badHeader)
        XCTAssertEqual(h.status, 2, h.out + h.err)
        XCTAssertTrue(h.err.contains("pairs list \(badHeader.path), line 1: expected the header \"folds n\" or \"n\""), h.err)

        // The shared LFW list parses: none of its people is in this folder, so the command stops
        // at that (after the warning), not at a line of the list.
        let lfw = TestData.shared.appendingPathComponent("lfw/pairs.txt")
        guard FileManager.default.fileExists(atPath: lfw.path) else { return XCTFail("test data \(lfw.path) missing") }
        let shared = try bench(pairs: lfw)
        XCTAssertEqual(shared.status, 2, shared.out + shared.err)
        XCTAssertTrue(shared.err.contains("no images of the pairs list's people under \(images.path)"), shared.err)
        XCTAssertFalse(shared.err.contains(", line "), shared.err)
        // 3 811 distinct images of 2 086 people (the View-2 list's), none of them here.
        XCTAssertTrue(shared.out.hasPrefix("warning: 3811 images the pairs list names are not under \(images.path): "), shared.out)
        XCTAssertTrue(shared.out.contains(" and 3806 more (2086 people it names have no image there and are left out)\n"), shared.out)
    }

    /// Images the pairs list names that are not in the folder are warned about in one line (count,
    /// first names, people left out); an image that cannot be decoded is named and left out of every
    /// count.
    func testMissingNamesAreWarnedAndUnreadableImagesNamed() throws {
        let list = dir.appendingPathComponent("pairs-missing.txt")
        try Data("1\t3\nKatie_Hill\t1\t99\nNobody_Here\t1\t2\nAoc\t1\t3\nKatie_Hill\t1\tObama\t2\nAoc\t2\tObama\t1\nNobody_Here\t1\tAoc\t1\n".utf8)
            .write(to: list)
        try Data("not an image".utf8).write(to: images.appendingPathComponent("Obama/Obama_0003.png"))
        let r = try bench(pairs: list)
        XCTAssertEqual(r.status, 0, r.out + r.err)
        XCTAssertEqual(lines(r.out, "warning:"),
                       ["warning: 3 images the pairs list names are not under \(images.path): Katie_Hill/Katie_Hill_0099.jpg, "
                        + "Nobody_Here/Nobody_Here_0001.jpg, Nobody_Here/Nobody_Here_0002.jpg (1 person it names has no image there and is left out)"],
                       r.out)
        XCTAssertTrue(r.out.contains("measured 8 images in "), r.out)
        XCTAssertTrue(r.out.contains("; 1 unreadable: Obama/Obama_0003.png\n"), r.out)
        XCTAssertTrue(r.out.contains("face matching on 8 images of 3 people"), r.out)
        XCTAssertEqual(lines(r.out, "shipped fmr_0.01 image-to-image:"),
                       ["shipped fmr_0.01 image-to-image: FMR 0.0000 % (0/42), FNMR 0.00 % (0/8)"], r.out)
    }

    /// A second fresh-user trial: a cache path that cannot be written is refused before any image
    /// is measured; a cache that cannot be read is said to be so (and rebuilt); byte-identical
    /// images under two people's names are warned about (one person's photo counted as another's).
    func testCachePathCheckedFirstACorruptCacheSaidAndIdenticalImagesWarned() throws {
        let folderAsCache = dir.appendingPathComponent("cache.bin")
        try FileManager.default.createDirectory(at: folderAsCache, withIntermediateDirectories: true)
        var r = try bench(cache: folderAsCache)
        XCTAssertEqual(r.status, 2, r.out + r.err)
        XCTAssertTrue(r.err.contains("--measure-cache \(folderAsCache.path) is not a regular file"), r.err)
        XCTAssertFalse(r.out.contains("measured"), r.out)

        try Data("IDVFB2 cut short".utf8).write(to: cache)
        r = try bench()
        XCTAssertEqual(r.status, 0, r.out + r.err)
        XCTAssertTrue(r.out.contains("the measure cache \(cache.path) could not be read"), r.out)
        XCTAssertTrue(r.out.contains("measured 8 images in "), r.out)
        r = try bench()
        XCTAssertFalse(r.out.contains("could not be read"), "rewritten: " + r.out)

        // Obama's second photo replaced by Aoc's first, byte for byte.
        try FileManager.default.removeItem(at: images.appendingPathComponent("Obama/Obama_0002.jpg"))
        try FileManager.default.copyItem(at: images.appendingPathComponent("Aoc/Aoc_0001.jpg"), to: images.appendingPathComponent("Obama/Obama_0002.jpg"))
        r = try bench()
        XCTAssertEqual(r.status, 0, r.out + r.err)
        XCTAssertEqual(lines(r.out, "warning: 1 group"),
                       ["warning: 1 group of images have the same bytes under different names (copies or links; each is compared as given): "
                        + "Aoc/Aoc_0001.jpg = Obama/Obama_0002.jpg"], r.out)
    }
}
